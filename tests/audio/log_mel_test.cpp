// Log-mel features: against an independent numpy implementation of the same definition (np.fft.rfft and its
// own Slaney filterbank; scripts/make-audio-fixtures wrote tests/audio/data/chirp_tones_16k.*), streaming
// in many chunkings bitwise equal to whole-signal extraction, frame counts, causality and the log floor.
#include "audio/log_mel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numbers>
#include <random>

#include "../testing/fp_bounds.h"
#include "audio/fft.h"
#include "audio/mel_filterbank.h"
#include "audio/wav.h"
#include "audio_test_util.h"

namespace gpstream::audio {
namespace {

using testing::read_f32;

const std::string kData = std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/";

std::vector<float> fixture_samples() {
  auto w = read_wav_file(kData + "chirp_tones_16k.wav");
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message());
  if (!w.ok()) return {};
  EXPECT_EQ(w->sample_rate, 16000u);
  return std::move(w).value().samples;
}

TEST(LogMel, MatchesNumpyReference) {
  const auto samples = fixture_samples();
  ASSERT_EQ(samples.size(), 20800u);
  const auto want = read_f32(kData + "chirp_tones_16k.logmel.f32");
  ASSERT_EQ(want.size(), 128u * kLogMelBins) << "regenerate with scripts/make-audio-fixtures";
  const auto got = log_mel(samples);
  ASSERT_EQ(got.size(), want.size());
  // Both sides compute in double and round to fp32 once (u|got| + u|want|); their double errors, per frame
  // i and bin m, from the frame's own data:
  //  - the windowed frame x (s·w, w's cosine): 3u₆₄ relative per sample;
  //  - the FFT (radix-2 complex of 256 plus the real split: 9 butterfly stages; numpy's pocketfft taken as
  //    no worse): ‖ΔX‖₂ ≤ 9η/(1 − 9η)·‖X‖₂, η = μ + γ_4(√2 + μ), μ = 2u₆₄ the twiddles (Higham Thm 24.2),
  //    ‖X‖₂ = √512·‖x‖₂ (Parseval), so every bin is off by ≤ δ = ‖ΔX‖₂ (+ the frame's 3u₆₄√512‖x‖₂);
  //  - P_k = |X_k|² within 2√P_k δ + δ² + γ_3(u₆₄)P_k, M_m = Σ_k F_mk P_k within Σ_k F_mk|ΔP_k| plus the
  //  sum's
  //    and the filterbank weights' own roundings, γ_{257+32}(u₆₄) Σ_k F_mk P_k;
  //  - ln(max(M, 1e-10)) within ΔM / max(M, 1e-10) + u₆₄|ln|, twice (both sides).
  const std::vector<double> fb =
      mel_filterbank_slaney(kLogMelBins, kLogMelFftSize, kLogMelSampleRate, 0.0, kLogMelMaxHz);
  const double u64 = gpstream::testing::kUnitF64, mu = 2 * u64;
  const double eta = mu + gpstream::testing::gamma_n(4, u64) * (std::sqrt(2.0) + mu);
  const double fft_rel = 9 * eta / (1 - 9 * eta) + 3 * u64;
  RealFft fft(kLogMelFftSize);
  std::vector<double> frame(kLogMelFftSize, 0.0);
  std::vector<std::complex<double>> spectrum(kLogMelFftSize / 2 + 1);
  double worst = 0.0, worst_excess = -1, max_delta = 0.0;
  size_t worst_at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t f = i / kLogMelBins, m = i % kLogMelBins;
    double tol = gpstream::testing::kUnitF32 * (std::fabs(got[i]) + std::fabs(want[i]));
    if (m == 0) {
      for (size_t t = 0; t < kLogMelWindow; ++t)
        frame[t] = samples[f * kLogMelHop + t] *
                   (0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(t) / kLogMelWindow));
      fft.forward(frame.data(), spectrum.data());
    }
    double x2 = 0;
    for (size_t t = 0; t < kLogMelWindow; ++t) x2 += frame[t] * frame[t];
    const double delta = fft_rel * std::sqrt(double(kLogMelFftSize) * x2);
    double M = 0, dM = 0;
    for (size_t k = 0; k < spectrum.size(); ++k) {
      const double w = fb[m * spectrum.size() + k], p = std::norm(spectrum[k]);
      M += w * p;
      dM +=
          w * (2 * std::sqrt(p) * delta + delta * delta + gpstream::testing::gamma_n(3 + 257 + 32, u64) * p);
    }
    tol += 2 * (dM / std::max(M, kLogMelFloor) + u64 * std::fabs(std::log(std::max(M, kLogMelFloor))));
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    max_delta = std::max(max_delta, d);
    if (d - tol > worst_excess) worst_excess = d - tol, worst_at = i, worst = d;
  }
  std::printf(
      "log-mel vs numpy: max |delta| = %.3g; largest |delta| − bound = %.3g (|delta| %.3g) at frame "
      "%zu bin %zu\n",
      max_delta, worst_excess, worst, worst_at / kLogMelBins, worst_at % kLogMelBins);
  RecordProperty("max_abs_delta", std::to_string(max_delta));
  EXPECT_LE(worst_excess, 0.0) << "frame " << worst_at / kLogMelBins << " bin " << worst_at % kLogMelBins
                               << ": got " << got[worst_at] << ", numpy " << want[worst_at];
  // The fixture starts with 50 ms of digital silence: frames 0-2 are all floor.
  for (size_t m = 0; m < kLogMelBins; ++m)
    EXPECT_EQ(got[2 * kLogMelBins + m], static_cast<float>(std::log(1e-10)));
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(float)), 0) << what << ": first difference at value " << i;
}

TEST(LogMelStream, AnyChunkingGivesTheWholeSignalFrames) {
  const auto samples = fixture_samples();
  const auto whole = log_mel(samples);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{159}, size_t{160}, size_t{161}, size_t{399}, size_t{400},
                       size_t{401}, size_t{4096}, samples.size()}) {
    LogMelStream stream;
    std::vector<float> frames;
    size_t made = 0;
    for (size_t at = 0; at < samples.size(); at += chunk)
      made += stream.push(samples.data() + at, std::min(chunk, samples.size() - at), frames);
    EXPECT_EQ(made, log_mel_frame_count(samples.size()));
    EXPECT_EQ(stream.frames_emitted(), made);
    EXPECT_EQ(stream.samples_pushed(), samples.size());
    expect_bitwise_equal(frames, whole, "chunk " + std::to_string(chunk));
  }
  // Random chunk sizes, including empty pushes.
  std::mt19937 rng(3);
  std::uniform_int_distribution<size_t> size(0, 700);
  LogMelStream stream;
  std::vector<float> frames;
  for (size_t at = 0; at < samples.size();) {
    const size_t n = std::min(size(rng), samples.size() - at);
    stream.push(samples.data() + at, n, frames);
    at += n;
  }
  expect_bitwise_equal(frames, whole, "random chunks");
}

TEST(LogMelStream, FramesAppearAsSoonAsTheirWindowIsComplete) {
  std::vector<float> samples(1000, 0.25f);
  LogMelStream stream;
  std::vector<float> frames;
  EXPECT_EQ(stream.push(samples.data(), 399, frames), 0u);
  EXPECT_EQ(stream.push(samples.data(), 1, frames), 1u);    // 400 samples: frame 0
  EXPECT_EQ(stream.push(samples.data(), 159, frames), 0u);  // 559
  EXPECT_EQ(stream.push(samples.data(), 1, frames), 1u);    // 560: frame 1
  EXPECT_EQ(stream.push(samples.data(), 320, frames), 2u);  // 880: frames 2, 3
  EXPECT_EQ(frames.size(), 4 * kLogMelBins);
  stream.reset();
  frames.clear();
  EXPECT_EQ(stream.push(samples.data(), 399, frames), 0u);
  EXPECT_EQ(stream.frames_emitted(), 0u);
}

TEST(LogMel, FrameCount) {
  EXPECT_EQ(log_mel_frame_count(0), 0u);
  EXPECT_EQ(log_mel_frame_count(399), 0u);
  EXPECT_EQ(log_mel_frame_count(400), 1u);
  EXPECT_EQ(log_mel_frame_count(559), 1u);
  EXPECT_EQ(log_mel_frame_count(560), 2u);
  EXPECT_EQ(log_mel_frame_count(16000), 98u);
  EXPECT_TRUE(log_mel(std::vector<float>(399, 1.0f)).empty());
}

TEST(LogMel, Causal) {
  // Frame i depends only on samples [160 i, 160 i + 400): changing later samples leaves it unchanged.
  auto samples = fixture_samples();
  const auto before = log_mel(samples);
  for (size_t t = 160 * 50 + 400; t < samples.size(); ++t) samples[t] = -samples[t];
  const auto after = log_mel(samples);
  EXPECT_EQ(std::memcmp(before.data(), after.data(), 51 * kLogMelBins * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(before.data() + 51 * kLogMelBins, after.data() + 51 * kLogMelBins,
                        kLogMelBins * sizeof(float)),
            0);
}

TEST(LogMel, ToneLandsInItsMelBin) {
  // A 1 kHz tone: the loudest bin is the filter whose centre is nearest 1 kHz (Slaney mel 15).
  std::vector<float> x(1600);
  for (size_t t = 0; t < x.size(); ++t)
    x[t] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * 1000.0 * t / 16000));
  const auto f = log_mel(x);
  const auto* frame = f.data();
  const size_t loudest = static_cast<size_t>(std::max_element(frame, frame + kLogMelBins) - frame);
  // Centres are at mel (m + 1) * 45.245 / 81; 15 mel is between m = 25 (14.52) and m = 26 (15.08).
  EXPECT_TRUE(loudest == 25 || loudest == 26) << loudest;
}

}  // namespace
}  // namespace gpstream::audio
