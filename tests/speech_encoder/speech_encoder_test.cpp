// Speech encoder forward: against an independent numpy forward (scripts/make-speech-encoder-fixtures wrote
// tests/audio/data/speech_encoder_tiny_*; the float64 reference of speech_encoder_reference.h too), streaming
// in several chunkings equal to the whole-utterance forward, bounded KV cache, and causality (no look-ahead
// beyond the current chunk).
#include "speech_encoder/speech_encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "../audio/audio_test_util.h"
#include "../testing/speech_encoder_bounds.h"
#include "audio/log_mel.h"
#include "audio/wav.h"
#include "speech_encoder/speech_embedding_stream.h"
#include "speech_encoder/speech_encoder_stream.h"
#include "speech_encoder_reference.h"

namespace gpstream::speech_encoder {
namespace {

using testing::read_f32;

const std::string kData = std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/";

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// max_i (|a_i − b_i| − tol − u|b_i|): ≤ 0 when every entry is within its tolerance (u|b_i|: the reference's
// own rounding to fp32; 0 for rel_u = 0).
double max_excess(const std::vector<float>& a, const std::vector<float>& b, double tol, double rel_u = 0) {
  EXPECT_EQ(a.size(), b.size());
  double m = -tol;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]) - tol - rel_u * std::fabs(b[i]));
  return m;
}

// Log-mel-like input: values around -8 with a spread of 4, seeded.
std::vector<float> random_mel(int64_t frames, int64_t n_mels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(-8.0f, 4.0f);
  std::vector<float> v(static_cast<size_t>(frames * n_mels));
  for (auto& x : v) x = d(rng);
  return v;
}

// Streams `mel` in pieces of `step` frames, then finish().
std::vector<float> stream_all(const SpeechEncoderModel& model, const std::vector<float>& mel, size_t step) {
  SpeechEncoderStream stream(model);
  const size_t M = static_cast<size_t>(model.config().n_mels);
  const size_t frames = mel.size() / M;
  std::vector<float> out;
  for (size_t f = 0; f < frames; f += step) {
    const size_t n = std::min(step, frames - f);
    const size_t before = out.size();
    const size_t rows = stream.push(mel.data() + f * M, n, out);
    EXPECT_EQ(out.size() - before, rows * static_cast<size_t>(model.config().llm_hidden));
  }
  stream.finish(out);
  EXPECT_EQ(stream.frames_pushed(), frames);
  return out;
}

void check_fixture(const std::string& name, int64_t n_frames) {
  auto model = SpeechEncoderModel::load(kData + "speech_encoder_" + name + ".safetensors");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const auto want = read_f32(kData + "speech_encoder_" + name + ".out.f32");
  const auto mel_all = read_f32(kData + "chirp_tones_16k.logmel.f32");
  ASSERT_GE(mel_all.size(), static_cast<size_t>(n_frames * 80));
  const std::vector<float> mel(mel_all.begin(), mel_all.begin() + n_frames * 80);
  const auto& c = model->config();
  ASSERT_EQ(want.size(), static_cast<size_t>(c.output_rows(n_frames) * c.llm_hidden))
      << "regenerate with scripts/make-speech-encoder-fixtures";
  SpeechEncoderPass pass(*model);
  const auto got = pass.forward(mel.data(), n_frames);
  // One fp32 forward (whole or streamed) against the float64 numpy forward, whose output was rounded to fp32:
  // speech_encoder_forward_bound (testing/speech_encoder_bounds.h) plus u·|want|.
  const double tol =
      testing::speech_encoder_forward_bound(*model, {.against_reference = true, .n_frames = n_frames}).out;
  EXPECT_LE(max_excess(got, want, tol, testing::kUnitF32), 0.0)
      << name << ": bound " << tol << ", max difference " << max_abs_diff(got, want);
  const auto streamed = stream_all(*model, mel, 5);
  EXPECT_LE(max_excess(streamed, want, tol, testing::kUnitF32), 0.0)
      << name << ": bound " << tol << ", max difference " << max_abs_diff(streamed, want);
  // The float64 forward the gradient tests take differences of (speech_encoder_reference.h) is the numpy
  // forward's: both within γ_N(u₆₄) of the magnitude, the fixture rounded to fp32 (u·|want|), and the
  // config's fp32 mel_shift, mel_scale and norm_eps within u of the script's decimal values: relative
  // perturbations of x' and of each RMSNorm's scale (≤ u each), carried to the output by the GELUs' slopes
  // (1.13³ < 2) as in speech_encoder_forward_bound: γ_{2(1 + norms)} of the magnitude.
  const auto b =
      testing::speech_encoder_forward_bound(*model, {.against_reference = true, .n_frames = n_frames});
  const auto ref = testing::speech_encoder_reference(*model, mel.data(), n_frames);
  const int64_t norms = c.n_layer * (c.conv_module_kernel > 0 ? 3 : 2) + 1;
  const double ref_tol = 2 * testing::gamma_n(b.roundings, testing::kUnitF64) * b.magnitude +
                         testing::gamma_n(2 * (1 + norms)) * b.magnitude;
  ASSERT_EQ(ref.out.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(ref.out[i], want[i], ref_tol + testing::kUnitF32 * std::fabs(want[i])) << name << " " << i;
}

TEST(SpeechEncoder, MatchesNumpyReferenceBoundedLeftContext) {
  check_fixture("tiny_a", 127);
}
TEST(SpeechEncoder, MatchesNumpyReferenceWideKernelNoStack) {
  check_fixture("tiny_b", 126);
}
TEST(SpeechEncoder, MatchesNumpyReferenceConvolutionModule) {
  check_fixture("tiny_c", 125);
}

// A model that differs from the fixture in one weight no longer matches it: the comparison can fail.
TEST(SpeechEncoder, FixtureComparisonDetectsAChangedWeight) {
  auto model = SpeechEncoderModel::load(kData + "speech_encoder_tiny_a.safetensors");
  ASSERT_TRUE(model.ok());
  const auto want = read_f32(kData + "speech_encoder_tiny_a.out.f32");
  const auto mel_all = read_f32(kData + "chirp_tones_16k.logmel.f32");
  model->values()[model->offsets().conv1_b + 3] += 0.2f;
  SpeechEncoderPass pass(*model);
  const double tol =
      testing::speech_encoder_forward_bound(*model, {.against_reference = true, .n_frames = 127}).out;
  EXPECT_GT(max_excess(pass.forward(mel_all.data(), 127), want, tol, testing::kUnitF32), 0.0);
}

SpeechEncoderConfig small_config() {
  SpeechEncoderConfig c;
  c.conv_channels = 32;
  c.d_model = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_ff = 48;
  c.chunk_frames = 4;
  c.stack = 2;
  c.proj_hidden = 40;
  c.llm_hidden = 24;
  return c;
}

void check_streaming_equals_whole(const SpeechEncoderConfig& c, int64_t frames) {
  ASSERT_TRUE(c.validate().ok()) << c.validate().error().message();
  SpeechEncoderModel model(c);
  model.init_random(7);
  const auto mel = random_mel(frames, c.n_mels, 3);
  SpeechEncoderPass pass(model);
  const auto whole = pass.forward(mel.data(), frames);
  ASSERT_EQ(whole.size(), static_cast<size_t>(c.output_rows(frames) * c.llm_hidden));
  ASSERT_GT(whole.size(), 0u);
  // Two fp32 forwards that sum in other orders (per-chunk rows on the few-row kernel and per-token attention
  // against sgemm over the utterance and whole-sequence attention): speech_encoder_forward_bound.
  const double tol = testing::speech_encoder_forward_bound(model, {.n_frames = frames}).out;
  for (size_t step : {size_t{1}, size_t{7}, size_t{33}, static_cast<size_t>(frames)}) {
    const auto streamed = stream_all(model, mel, step);
    EXPECT_LE(max_abs_diff(streamed, whole), tol) << "step " << step;
  }
}

TEST(SpeechEncoderStream, EqualsWholeUtteranceForSeveralChunkings) {
  check_streaming_equals_whole(small_config(), 203);  // odd: partial conv window, chunk and stack at the end
}

TEST(SpeechEncoderStream, EqualsWholeUtteranceWithBoundedLeftContext) {
  auto c = small_config();
  c.left_chunks = 2;
  c.conv_kernel = 5;
  c.stack = 1;
  c.chunk_frames = 3;
  check_streaming_equals_whole(c, 250);
}

// The convolution module's kernel (6) spans more than a chunk (4 frames): its state crosses chunk borders.
TEST(SpeechEncoderStream, EqualsWholeUtteranceWithConvolutionModule) {
  auto c = small_config();
  c.conv_module_kernel = 6;
  check_streaming_equals_whole(c, 203);
  c.left_chunks = 1;
  c.conv_module_kernel = 2;
  check_streaming_equals_whole(c, 150);
}

TEST(SpeechEncoderStream, EqualsWholeUtteranceDefaultConfig) {
  check_streaming_equals_whole(SpeechEncoderConfig{}, 180);
}

TEST(SpeechEncoderStream, RowsComeOutChunkByChunk) {
  const auto c = small_config();  // 4 encoder frames per chunk = 16 log-mel frames; 2 rows per chunk
  SpeechEncoderModel model(c);
  model.init_random(1);
  SpeechEncoderStream stream(model);
  const auto mel = random_mel(64, c.n_mels, 5);
  std::vector<float> out;
  ASSERT_EQ(c.mel_frames_per_chunk(), 16);
  ASSERT_EQ(c.rows_per_chunk(), 2);
  // Frames 0..14 complete no chunk; frame 15 completes the first one.
  EXPECT_EQ(stream.push(mel.data(), 15, out), 0u);
  EXPECT_EQ(stream.push(mel.data() + 15 * 80, 1, out), 2u);
  EXPECT_EQ(stream.encoder_frames_done(), 4);
  EXPECT_EQ(stream.push(mel.data() + 16 * 80, 48, out), 6u);
  EXPECT_EQ(stream.rows_emitted(), 8u);
  EXPECT_EQ(stream.finish(out), 0u);
  stream.reset();
  std::vector<float> again;
  stream.push(mel.data(), 15, again);
  stream.push(mel.data() + 15 * 80, 1, again);
  stream.push(mel.data() + 16 * 80, 48, again);
  stream.finish(again);
  EXPECT_EQ(again, out);  // reset() forgets the previous utterance
}

TEST(SpeechEncoderStream, LeftContextBoundsTheCache) {
  auto c = small_config();
  c.left_chunks = 2;
  SpeechEncoderModel model(c);
  model.init_random(2);
  SpeechEncoderStream stream(model);
  const auto mel = random_mel(400, c.n_mels, 9);
  std::vector<float> out;
  for (int64_t f = 0; f < 400; f += 16) {
    stream.push(mel.data() + f * 80, 16, out);
    EXPECT_LE(stream.cache_rows(), static_cast<size_t>((c.left_chunks + 1) * c.chunk_frames));
  }
  EXPECT_EQ(stream.cache_rows(), static_cast<size_t>(c.left_chunks * c.chunk_frames));
}

// Streams of different lengths, fed in different pieces and started at different times (so their chunks sit
// at different positions over key/value caches of different sizes), run through stacked Transformer passes
// (run_ready_chunks, one chunk each per call or all at once) give each stream's rows of running it alone.
// Not bit for bit: linear_forward picks its kernel by row count (the few-token kernel up to 7 rows, OpenBLAS
// sgemm from 8, whose blocking may also depend on the rows), so a stream's rows are summed in another order
// stacked than alone. Both are fp32 forwards of the same chunked computation, each within the first-order
// bound γ_N·magnitude of speech_encoder_forward_bound (testing/speech_encoder_bounds.h: N the dot lengths
// and roundings along the whole path, the magnitude from the weights) of the exact value, so they differ by
// at most that bound twice over; the bound's `out` for the stream's length is already that difference bound
// (it is what a stream and the whole-utterance pass, two such orders, are held to above).
void check_batched_equals_alone(const SpeechEncoderConfig& c, int64_t max_chunks_each) {
  SpeechEncoderModel model(c);
  model.init_random(17);
  const size_t M = static_cast<size_t>(c.n_mels);
  const std::vector<size_t> lengths = {203, 150, 97, 260, 16, 40};
  const std::vector<size_t> steps = {5, 16, 33, 7, 64, 1};
  const std::vector<size_t> start_round = {0, 3, 1, 0, 9, 20};
  const size_t S = lengths.size();
  std::vector<std::vector<float>> mel(S), alone(S), got(S);
  std::vector<std::unique_ptr<SpeechEncoderStream>> streams;
  for (size_t i = 0; i < S; ++i) {
    mel[i] = random_mel(static_cast<int64_t>(lengths[i]), c.n_mels, static_cast<uint32_t>(40 + i));
    alone[i] = stream_all(model, mel[i], steps[i]);
    streams.push_back(std::make_unique<SpeechEncoderStream>(model));
  }
  std::vector<size_t> fed(S, 0);
  std::vector<bool> ended(S, false);
  for (size_t round = 0; std::find(ended.begin(), ended.end(), false) != ended.end(); ++round) {
    std::vector<SpeechEncoderStream*> batch;
    std::vector<std::vector<float>*> outs;
    for (size_t i = 0; i < S; ++i) {
      if (round < start_round[i] || ended[i]) continue;
      if (fed[i] < lengths[i]) {
        const size_t n = std::min(steps[i], lengths[i] - fed[i]);
        streams[i]->feed(mel[i].data() + fed[i] * M, n);
        fed[i] += n;
      } else if (streams[i]->chunks_ready() == 0 || max_chunks_each > 1) {
        streams[i]->end_input();
        ended[i] = true;
      }
      batch.push_back(streams[i].get());
      outs.push_back(&got[i]);
    }
    SpeechEncoderStream::run_ready_chunks(batch, outs, max_chunks_each);
  }
  // Whatever is left (one chunk per call leaves some waiting).
  std::vector<SpeechEncoderStream*> all;
  std::vector<std::vector<float>*> outs;
  for (size_t i = 0; i < S; ++i) {
    all.push_back(streams[i].get());
    outs.push_back(&got[i]);
  }
  SpeechEncoderStream::run_ready_chunks(all, outs);
  for (size_t i = 0; i < S; ++i) {
    EXPECT_EQ(streams[i]->chunks_ready(), 0);
    ASSERT_EQ(got[i].size(), alone[i].size()) << "stream " << i;
    EXPECT_EQ(streams[i]->rows_emitted() * static_cast<size_t>(c.llm_hidden), got[i].size());
    const double tol =
        testing::speech_encoder_forward_bound(model, {.n_frames = static_cast<int64_t>(lengths[i])}).out;
    EXPECT_LE(max_abs_diff(got[i], alone[i]), tol) << "stream " << i;
  }
}

TEST(SpeechEncoderStream, BatchedAcrossStreamsEqualsAlone) {
  auto c = small_config();
  check_batched_equals_alone(c, 1);
  check_batched_equals_alone(c, 1000);
  c.left_chunks = 2;  // caches trimmed at different points per stream
  c.conv_module_kernel = 6;
  check_batched_equals_alone(c, 1);
  c.stack = 1;
  c.chunk_frames = 3;
  c.conv_module_kernel = 0;
  check_batched_equals_alone(c, 2);
}

// Rows of chunk k depend only on log-mel frames < 4 * chunk_frames * (k + 1): changing later frames leaves
// them unchanged, and changing a frame inside a chunk changes that chunk's rows.
TEST(SpeechEncoder, NoLookAheadBeyondTheChunk) {
  const auto c = small_config();
  SpeechEncoderModel model(c);
  model.init_random(4);
  const int64_t frames = 160;
  auto mel = random_mel(frames, c.n_mels, 11);
  SpeechEncoderPass pass(model);
  const auto base = pass.forward(mel.data(), frames);
  const int64_t mel_per_chunk = 4 * c.chunk_frames, rows_per_chunk = c.chunk_frames / c.stack;
  const int64_t LH = c.llm_hidden;
  for (int64_t chunk = 0; chunk < 3; ++chunk) {
    auto changed = mel;
    const int64_t first_later = mel_per_chunk * (chunk + 1);
    for (int64_t i = first_later * 80; i < frames * 80; ++i) changed[static_cast<size_t>(i)] += 3.0f;
    const auto got = pass.forward(changed.data(), frames);
    const int64_t stable = (chunk + 1) * rows_per_chunk * LH;
    for (int64_t i = 0; i < stable; ++i)
      ASSERT_EQ(got[static_cast<size_t>(i)], base[static_cast<size_t>(i)]) << i;
    float later = 0.0f;
    for (int64_t i = stable; i < stable + rows_per_chunk * LH; ++i)
      later = std::max(later, std::fabs(got[static_cast<size_t>(i)] - base[static_cast<size_t>(i)]));
    // Must-differ checks: a row that does not depend on the changed frames is recomputed from identical
    // inputs by identical code and comes out bit for bit (the ASSERT_EQ above), so rounding cannot make a
    // difference appear; the thresholds only ask that the dependence be visible. Frames moved by 3 (0.75
    // after mel_scale, on inputs of unit spread) move the rows by orders of magnitude more.
    EXPECT_GT(later, 1e-4f) << "the next chunk must see the changed frames";
  }
  // The last log-mel frame of chunk 0 is visible to chunk 0's first row (look-ahead within the chunk).
  auto changed = mel;
  for (int64_t j = 0; j < 80; ++j) changed[static_cast<size_t>((mel_per_chunk - 1) * 80 + j)] += 3.0f;
  const auto got = pass.forward(changed.data(), frames);
  float first_row = 0.0f;
  for (int64_t i = 0; i < LH; ++i)
    first_row = std::max(first_row, std::fabs(got[static_cast<size_t>(i)] - base[static_cast<size_t>(i)]));
  EXPECT_GT(first_row, 1e-5f);
}

TEST(SpeechEncoder, ShortUtterancesGiveNoRows) {
  const auto c = small_config();
  SpeechEncoderModel model(c);
  model.init_random(5);
  SpeechEncoderPass pass(model);
  const auto mel = random_mel(7, c.n_mels, 1);
  EXPECT_TRUE(pass.forward(mel.data(), 7).empty());  // 7 frames -> 1 encoder frame < stack
  EXPECT_TRUE(pass.forward(mel.data(), 0).empty());
  SpeechEncoderStream stream(model);
  std::vector<float> out;
  EXPECT_EQ(stream.push(mel.data(), 7, out), 0u);
  EXPECT_EQ(stream.finish(out), 0u);
  EXPECT_TRUE(out.empty());
}

// Samples in any chunk sizes through LogMelStream + the encoder equal log_mel() + the whole-utterance
// forward.
TEST(SpeechEmbeddingStream, SamplesToRowsEqualsWholeFile) {
  auto wav = audio::read_wav_file(kData + "chirp_tones_16k.wav");
  ASSERT_TRUE(wav.ok());
  const auto& samples = wav->samples;
  auto model = SpeechEncoderModel::load(kData + "speech_encoder_tiny_a.safetensors");
  ASSERT_TRUE(model.ok());
  const auto mel = audio::log_mel(samples);
  const int64_t frames = static_cast<int64_t>(mel.size() / audio::kLogMelBins);
  SpeechEncoderPass pass(*model);
  const auto whole = pass.forward(mel.data(), frames);
  ASSERT_FALSE(whole.empty());
  // LogMelStream gives log_mel()'s frames bit for bit (log_mel_test.cpp); the encoders differ as two fp32
  // forwards: speech_encoder_forward_bound.
  const double tol = testing::speech_encoder_forward_bound(*model, {.n_frames = frames}).out;
  SpeechEmbeddingStream stream(*model);
  for (size_t step : {size_t{1}, size_t{160}, size_t{1001}}) {
    stream.reset();
    std::vector<float> rows;
    for (size_t i = 0; i < samples.size(); i += step)
      stream.push(samples.data() + i, std::min(step, samples.size() - i), rows);
    stream.finish(rows);
    EXPECT_EQ(stream.samples_pushed(), samples.size());
    EXPECT_LE(max_abs_diff(rows, whole), tol) << "step " << step;
  }
}

}  // namespace
}  // namespace gpstream::speech_encoder
