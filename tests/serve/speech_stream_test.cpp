// Audio streams on the server (docs/server.md, "Audio streams"): a tiny random LLM directory with a random
// speech encoder beside it (a speech model directory), a real server on a loopback port, and WebSocket
// clients streaming synthetic signals as binary PCM frames. The oracle is a Session fed by hand with the
// encoder's whole-utterance rows (audio::log_mel + SpeechEncoderPass::forward, no streaming code) split per
// chunk: the server must send the same words, delays (chunks) and delay_ms. Bad frames end only their own
// stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <thread>

#include "../testing/fp_bounds.h"
#include "../testing/temp_dir.h"
#include "../testing/tiny_speech_model.h"
#include "audio/log_mel.h"
#include "audio/resample.h"
#include "io/safetensors.h"
#include "model/random_init.h"
#include "serve/server.h"
#include "serve_test_client.h"
#include "speech/speech_model.h"
#include "speech_encoder/speech_encoder.h"
#include "stream/model_meta.h"
#include "tokenizer/tokenizer.h"

namespace gpstream::serve {
namespace {

using gpstream::testing::WsClient;
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kTokenizer =
    std::string(GPSTREAM_SOURCE_DIR) + "/tests/tokenizer/data/trained/tokenizer.json";

// Writes a speech model directory: random llama LLM (n_embd 32) + random encoder (llm_hidden 32).
void write_speech_model(const std::string& dir) {
  auto tok = tokenizer::Tokenizer::load(kTokenizer);
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  model::ModelConfig c;
  c.n_vocab = tok->vocab_size();
  c.n_embd = 32;
  c.n_ff = 64;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_head_kv = 1;
  c.head_dim = 16;
  c.rope_theta = 10000;
  c.norm_eps = 1e-5f;
  c.tie_word_embeddings = true;
  c.torch_dtype = "float32";
  if (auto bos = tok->bos_id()) c.bos_token_id = *bos;
  if (auto eos = tok->eos_id()) c.eos_token_ids = {*eos};
  ASSERT_TRUE(c.validate().ok());
  model::RandomInitOptions ro;
  ro.seed = 3;
  ro.std = 0.2f;  // a peaked next-token distribution: greedy choices far from ties
  io::TensorMap t = model::random_tensors(c, ro);
  std::vector<io::TensorToWrite> w;
  for (const auto& [name, data] : t.tensors) w.push_back({name, data});
  ASSERT_TRUE(io::write_safetensors(dir + "/model.safetensors", w, {{"format", "pt"}}).ok());
  gpstream::testing::write_bytes(dir + "/config.json", model::config_to_hf_json(c));
  gpstream::testing::write_bytes(dir + "/gpstream.json", stream::ModelMeta{}.to_json());
  fs::copy_file(kTokenizer, dir + "/tokenizer.json");

  // 160 ms per chunk (4 encoder frames), 2 rows of 80 ms.
  const speech_encoder::SpeechEncoderConfig ec =
      gpstream::testing::tiny_speech_encoder_config(32, /*chunk_frames=*/4);
  ASSERT_TRUE(ec.validate().ok());
  speech_encoder::SpeechEncoderModel enc(ec);
  enc.init_random(11);
  ASSERT_TRUE(enc.save(dir + "/" + speech::kSpeechEncoderFile).ok());
}

// A deterministic test signal: a chirp, two tones and a little noise.
std::vector<float> signal(size_t n, uint32_t rate, int variant) {
  std::vector<float> x(n);
  uint32_t state = 12345u + static_cast<uint32_t>(variant);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / rate;
    state = state * 1664525u + 1013904223u;
    const double noise = (static_cast<double>(state >> 8) / (1 << 24) - 0.5) * 0.02;
    const double f0 = 200.0 + 150.0 * variant;
    x[i] = static_cast<float>(0.3 * std::sin(2 * std::numbers::pi * (f0 * t + 400.0 * t * t)) +
                              0.1 * std::sin(2 * std::numbers::pi * 1500.0 * t) + noise);
  }
  return x;
}

std::string f32le_bytes(std::span<const float> x) {
  std::string s(x.size() * 4, '\0');
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], 4);
    for (int b = 0; b < 4; ++b) s[4 * i + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return s;
}

std::vector<int16_t> to_s16(std::span<const float> x) {
  std::vector<int16_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<int16_t>(std::lround(std::clamp(x[i] * 32768.0f, -32768.0f, 32767.0f)));
  return q;
}

std::string s16le_bytes(const std::vector<int16_t>& q) {
  std::string s(q.size() * 2, '\0');
  for (size_t i = 0; i < q.size(); ++i) {
    const auto u = static_cast<uint16_t>(q[i]);
    s[2 * i] = static_cast<char>(u & 0xff);
    s[2 * i + 1] = static_cast<char>(u >> 8);
  }
  return s;
}

struct Words {
  std::vector<std::string> words;
  std::vector<int> delays;
  std::vector<double> delay_ms;
  std::vector<int> segment;  // the session segment each word was written in
};

class SpeechServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new gpstream::testing::TempDir();
    write_speech_model(dir_->path());
    ASSERT_TRUE(speech::is_speech_model_dir(dir_->path()));
    auto m = speech::SpeechModel::load(dir_->path(), 1);
    ASSERT_TRUE(m.ok()) << m.error().message();
    model_ = new speech::SpeechModel(std::move(*m));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static stream::SessionOptions defaults() {
    stream::SessionOptions so = model_->llm.default_options();
    so.k = 2;
    so.max_target_tokens = 32;
    return so;
  }

  static ServerOptions server_options(bool speech = true) {
    ServerOptions o;
    o.port = 0;
    o.web_root = "";
    if (speech) o.speech_encoder = model_->encoder.get();
    return o;
  }

  void start(bool speech = true) { start_with(server_options(speech)); }

  void start_with(ServerOptions o) {
    auto s = Server::start(model_->llm, defaults(), std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    port_ = server_->port();
  }

  // The oracle: 16 kHz samples → whole-utterance log-mel → whole-utterance encoder forward → rows split into
  // chunks of rows_per_chunk (the last one shorter, 80 ms per row) → a Session fed by hand, stepped alone.
  // It forwards on the model the server's engine thread uses, and a forward is not reentrant (one shared
  // workspace): call it before start() or while no stream is open — not after clients merely dropped their
  // streams, whose engine work (the first Open builds the prompt cache with a forward) may still be running.
  static Words reference(const std::vector<float>& samples_16k, bool continuous,
                         bool end_after_source = false, int beam = 1) {
    const speech_encoder::SpeechEncoderConfig& ec = model_->encoder->config();
    const std::vector<float> mel = audio::log_mel(samples_16k);
    speech_encoder::SpeechEncoderPass pass(*model_->encoder);
    const std::vector<float>& rows =
        pass.forward(mel.data(), static_cast<int64_t>(mel.size() / audio::kLogMelBins));
    const auto width = static_cast<size_t>(ec.llm_hidden);
    const size_t n_rows = rows.size() / width, per_chunk = static_cast<size_t>(ec.rows_per_chunk());
    stream::SessionOptions so = defaults();
    so.continuous = continuous;
    so.end_after_source = end_after_source;
    so.beam = beam;
    auto s = stream::Session::create(*model_->llm.model, *model_->llm.codec, so);
    EXPECT_TRUE(s.ok());
    for (size_t r = 0; r < n_rows; r += per_chunk) {
      const size_t n = std::min(per_chunk, n_rows - r);
      EXPECT_TRUE((*s)->push_source_embeddings({rows.data() + r * width, n * width}, static_cast<int>(width),
                                               80.0 * static_cast<double>(n))
                      .ok());
    }
    EXPECT_TRUE((*s)->end_source().ok());
    Words out;
    int segment = 0;
    for (;;) {
      auto e = (*s)->step();
      EXPECT_TRUE(e.ok());
      if (!e.ok() || e->kind == stream::EventKind::Finished) break;
      if (e->kind == stream::EventKind::SegmentEnd) ++segment;
      if (e->kind == stream::EventKind::Word) {
        out.words.push_back(e->word);
        out.delays.push_back(e->delay);
        out.delay_ms.push_back(e->delay_ms);
        out.segment.push_back(segment);
      }
    }
    return out;
  }

  static gpstream::testing::TempDir* dir_;
  static speech::SpeechModel* model_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

gpstream::testing::TempDir* SpeechServeTest::dir_ = nullptr;
speech::SpeechModel* SpeechServeTest::model_ = nullptr;

// Streams `bytes` in pieces of `piece` bytes after `start`; returns the words and checks the exchange's
// shape.
Words stream_audio(int port, const std::string& start, const std::string& bytes, size_t piece,
                   int* close_code = nullptr) {
  WsClient c(port);
  EXPECT_TRUE(c.send(start));
  auto ready = c.read_json();
  EXPECT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  if (ready) {
    EXPECT_EQ((*ready)["input"], "audio");
  }
  for (size_t i = 0; i < bytes.size(); i += piece) EXPECT_TRUE(c.send_binary(bytes.substr(i, piece)));
  EXPECT_TRUE(c.send(R"({"type": "end"})"));
  Words out;
  bool finished = false;
  for (const json& m : c.read_all()) {
    if (m["type"] == "word") {
      out.words.push_back(m["word"]);
      out.delays.push_back(m["delay"]);
      out.delay_ms.push_back(m["delay_ms"]);
      out.segment.push_back(m["segment"]);
      EXPECT_GE(m["lag_ms"].get<double>(), 0.0);
    } else if (m["type"] == "finished") {
      finished = true;
    } else {
      EXPECT_EQ(m["type"], "segment_end") << m.dump();
    }
  }
  EXPECT_TRUE(finished);
  if (close_code) *close_code = c.close_code();
  EXPECT_EQ(c.close_code(), 1000);
  return out;
}

void expect_same(const Words& got, const Words& want) {
  EXPECT_EQ(got.words, want.words);
  EXPECT_EQ(got.delays, want.delays);
  ASSERT_EQ(got.delay_ms.size(), want.delay_ms.size());
  // The server writes delay_ms with three decimals (serve/stream_protocol.cpp ms_value, correctly rounded as
  // by printf): half a unit of the last place, 0.5e-3 ms, and the parse back to the nearest double u₆₄|v|.
  for (size_t i = 0; i < got.delay_ms.size(); ++i)
    EXPECT_NEAR(got.delay_ms[i], want.delay_ms[i],
                0.5e-3 + gpstream::testing::kUnitF64 * std::fabs(want.delay_ms[i]));
}

// 125 log-mel frames: 15 rows, i.e. 7 full chunks of 2 rows and a partial chunk of 1.
constexpr size_t kSamples16k = 400 + 160 * 124;

TEST_F(SpeechServeTest, F32StreamEqualsASessionFedTheWholeUtteranceRows) {
  start();
  const std::vector<float> x = signal(kSamples16k, 16000, 0);
  const Words want = reference(x, /*continuous=*/false), want_continuous = reference(x, /*continuous=*/true);
  ASSERT_FALSE(want.words.empty());
  EXPECT_EQ(want.delays.back(), 8);  // every chunk read by the end: the reference really has 8 chunks
  const std::string bytes = f32le_bytes(x);
  expect_same(stream_audio(port_, R"({"type": "start", "continuous": false})", bytes, 4 * 1237), want);
  // The default (continuous) stream, the format and rate given explicitly, another frame size.
  expect_same(stream_audio(port_, R"({"type": "start", "audio_format": "f32le", "sample_rate": 16000})",
                           bytes, 4 * 160),
              want_continuous);
}

// Audio of any length: a continuous stream is cut at pauses (serve/audio_units.h). Two signals a second of
// zeros apart are two pieces, each the words of a continuous session fed that piece alone: piece 1 is x1 and
// the 50 quiet frames (8,000 samples) that end it; the next 50 frames are skipped and counted into the first
// chunk of piece 2, x2 (500 ms more delay_ms for the words of its first session segment; a later segment, of
// chunks the model left unread, counts its own). A stream that is not continuous is one utterance.
TEST_F(SpeechServeTest, AContinuousStreamIsCutAtPauses) {
  start();
  const std::vector<float> x1 = signal(160 * 100, 16000, 1), x2 = signal(kSamples16k, 16000, 2);
  std::vector<float> recording = x1, seg1 = x1;
  recording.insert(recording.end(), 16000, 0.0f);
  recording.insert(recording.end(), x2.begin(), x2.end());
  seg1.insert(seg1.end(), 8000, 0.0f);
  Words want = reference(seg1, /*continuous=*/true);
  const Words want2 = reference(x2, /*continuous=*/true);
  ASSERT_FALSE(want.words.empty());
  ASSERT_FALSE(want2.words.empty());
  want.words.insert(want.words.end(), want2.words.begin(), want2.words.end());
  want.delays.insert(want.delays.end(), want2.delays.begin(), want2.delays.end());
  const int segments1 = want.segment.back() + 1;
  for (size_t i = 0; i < want2.words.size(); ++i) {
    want.delay_ms.push_back(want2.delay_ms[i] + (want2.segment[i] == 0 ? 500.0 : 0.0));
    want.segment.push_back(segments1 + want2.segment[i]);
  }
  const Words got = stream_audio(port_, R"({"type": "start"})", f32le_bytes(recording), 4 * 1237);
  expect_same(got, want);
  EXPECT_EQ(got.segment, want.segment);
  // Not continuous: one utterance, silence included.
  expect_same(
      stream_audio(port_, R"({"type": "start", "continuous": false})", f32le_bytes(recording), 4 * 1237),
      reference(recording, /*continuous=*/false));
}

TEST_F(SpeechServeTest, EndAfterSourceIsAPerStreamOptionReportedByReady) {
  const std::vector<float> x = signal(kSamples16k, 16000, 2);
  const Words want = reference(x, /*continuous=*/false, /*end_after_source=*/true);  // before the server runs
  start();
  for (const bool on : {false, true}) {
    WsClient c(port_);
    ASSERT_TRUE(c.send(json{{"type", "start"}, {"end_after_source", on}}.dump()));
    auto ready = c.read_json();
    ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
    EXPECT_EQ((*ready)["end_after_source"], on);
  }
  expect_same(stream_audio(port_, R"({"type": "start", "continuous": false, "end_after_source": true})",
                           f32le_bytes(x), 4 * 997),
              want);
}

TEST_F(SpeechServeTest, BeamIsAPerStreamOptionReportedByReady) {
  const std::vector<float> x = signal(kSamples16k, 16000, 2);
  const Words want = reference(x, /*continuous=*/false, /*end_after_source=*/false, /*beam=*/3);
  start();
  for (const int beam : {1, 3}) {
    WsClient c(port_);
    ASSERT_TRUE(c.send(json{{"type", "start"}, {"beam", beam}}.dump()));
    auto ready = c.read_json();
    ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
    EXPECT_EQ((*ready)["beam"], beam);
  }
  expect_same(
      stream_audio(port_, R"({"type": "start", "continuous": false, "beam": 3})", f32le_bytes(x), 4 * 997),
      want);
}

TEST_F(SpeechServeTest, S16AtAnotherRateIsResampledLikeTheWholeSignal) {
  start();
  const uint32_t rate = 22050;
  const auto n = static_cast<size_t>(kSamples16k * 22050 / 16000);
  const std::vector<int16_t> q = to_s16(signal(n, rate, 1));
  std::vector<float> decoded(q.size());
  for (size_t i = 0; i < q.size(); ++i) decoded[i] = static_cast<float>(q[i]) / 32768.0f;
  auto x16 = audio::resample(decoded, rate, 16000);
  ASSERT_TRUE(x16.ok());
  const Words want = reference(*x16, /*continuous=*/false);
  ASSERT_FALSE(want.words.empty());
  expect_same(
      stream_audio(port_,
                   R"({"type": "start", "continuous": false, "audio_format": "s16le", "sample_rate": 22050})",
                   s16le_bytes(q), 2 * 999),
      want);
}

TEST_F(SpeechServeTest, ConcurrentAudioStreamsAreBatchedAndEachIsExact) {
  start();
  constexpr int kStreams = 6;
  std::vector<std::vector<float>> xs;
  std::vector<Words> want;
  for (int i = 0; i < kStreams; ++i) {
    xs.push_back(signal(kSamples16k - 1000 * static_cast<size_t>(i), 16000, i));
    want.push_back(reference(xs.back(), /*continuous=*/false));
  }
  std::vector<Words> got(kStreams);
  std::vector<std::thread> threads;
  for (int i = 0; i < kStreams; ++i)
    threads.emplace_back([&, i] {
      got[i] = stream_audio(port_, R"({"type": "start", "continuous": false})", f32le_bytes(xs[i]),
                            4 * (500 + 97 * i));
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kStreams; ++i) {
    SCOPED_TRACE("stream " + std::to_string(i));
    expect_same(got[i], want[i]);
  }
  EXPECT_GE(server_->metrics().audio_chunks.load(), kStreams);
}

// The speech encoder runs on the engine thread, a slice per stream per round: a client that sends a long
// recording as fast as it can holds up neither another stream nor GET /health, and still gets its exact
// words.
TEST_F(SpeechServeTest, ALongRecordingSentAtOnceHoldsUpNoOtherStream) {
  const std::vector<float> long_x = signal(16000 * 120, 16000, 5);
  const auto reference_start = std::chrono::steady_clock::now();
  const Words want_long = reference(long_x, /*continuous=*/false);
  const double reference_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start).count();
  const std::vector<float> short_x = signal(kSamples16k, 16000, 4);
  const Words want_short = reference(short_x, /*continuous=*/false);
  ASSERT_FALSE(want_long.words.empty());
  start();
  // The long stream's encoding and translation on a busy machine: far more than the oracle's own time.
  const int long_timeout_s = 120 + static_cast<int>(std::ceil(50 * reference_s));
  WsClient long_client(port_, long_timeout_s);
  ASSERT_TRUE(long_client.send(R"({"type": "start", "continuous": false})"));
  auto ready = long_client.read_json();
  ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  const std::string long_bytes = f32le_bytes(long_x);
  constexpr size_t kPiece = 4 * 16000;  // 1 s per frame, within the default 64 KiB message limit
  for (size_t i = 0; i < long_bytes.size(); i += kPiece)
    ASSERT_TRUE(long_client.send_binary(long_bytes.substr(i, kPiece)));
  ASSERT_TRUE(long_client.send(R"({"type": "end"})"));

  // While the engine works through two minutes of audio: another stream completes exactly, /health answers.
  expect_same(
      stream_audio(port_, R"({"type": "start", "continuous": false})", f32le_bytes(short_x), 4 * 1000),
      want_short);
  const auto health = gpstream::testing::http_request(port_, gpstream::testing::http::verb::get, "/health");
  EXPECT_EQ(health.status, 200);

  Words got_long;
  bool finished = false;
  for (const json& m : long_client.read_all()) {
    if (m["type"] == "word") {
      got_long.words.push_back(m["word"]);
      got_long.delays.push_back(m["delay"]);
      got_long.delay_ms.push_back(m["delay_ms"]);
    } else if (m["type"] == "finished") {
      finished = true;
    }
  }
  EXPECT_TRUE(finished);
  EXPECT_EQ(long_client.close_code(), 1000);
  expect_same(got_long, want_long);
}

// Audio waiting for the encoder is bounded per stream (EngineLimits::max_unencoded_audio_ms): past it the
// stream ends with "audio_backlog_full"; below it the same audio in one frame is transcribed exactly.
TEST_F(SpeechServeTest, AudioWaitingForTheEncoderIsBounded) {
  const std::vector<float> x = signal(kSamples16k, 16000, 6);  // about 1.3 s
  const Words want = reference(x, /*continuous=*/false);
  const std::vector<float> too_long = signal(16000 * 3, 16000, 7);
  ServerOptions o = server_options();
  o.max_message_bytes = 1 << 20;
  o.engine.max_unencoded_audio_ms = 2000;
  start_with(std::move(o));
  {  // 3 s in one frame: more than 2 s waiting at once
    WsClient c(port_);
    ASSERT_TRUE(c.send(R"({"type": "start"})"));
    ASSERT_TRUE(c.send_binary(f32le_bytes(too_long)));
    json error;
    for (const json& m : c.read_all())
      if (m["type"] == "error") error = m;
    EXPECT_EQ(error["code"], "audio_backlog_full") << error.dump();
    EXPECT_NE(error["message"].get<std::string>().find("2 s"), std::string::npos) << error.dump();
    EXPECT_EQ(c.close_code(), 1008);
  }
  expect_same(stream_audio(port_, R"({"type": "start", "continuous": false})", f32le_bytes(x), 4 * x.size()),
              want);
  EXPECT_EQ(server_->open_sessions(), 0);
}

// Sends `start`, then `frames` (text when the bool is true), and returns the error event and close code.
std::pair<json, int> expect_error(int port, const std::string& start,
                                  const std::vector<std::pair<bool, std::string>>& frames) {
  WsClient c(port);
  json error;
  if (!start.empty()) {
    EXPECT_TRUE(c.send(start));
  }
  for (const auto& [text, f] : frames) {
    if (text) {
      c.send(f);
    } else {
      c.send_binary(f);
    }
  }
  for (const json& m : c.read_all())
    if (m["type"] == "error") error = m;
  return {error, c.close_code()};
}

TEST_F(SpeechServeTest, BadFramesGetClearErrorsAndTheServerCarriesOn) {
  const std::vector<float> x = signal(kSamples16k / 2, 16000, 2);
  const Words want = reference(x, /*continuous=*/false);
  start();
  const std::string start_msg = R"({"type": "start"})";
  {  // 6 bytes are not whole f32le samples
    auto [e, code] = expect_error(port_, start_msg, {{false, std::string(6, '\0')}});
    EXPECT_EQ(e["code"], "bad_audio");
    EXPECT_NE(e["message"].get<std::string>().find("6 bytes"), std::string::npos) << e.dump();
    EXPECT_EQ(code, 1007);
  }
  {  // an odd byte count for s16le
    auto [e, code] =
        expect_error(port_, R"({"type": "start", "audio_format": "s16le"})", {{false, std::string(3, '\0')}});
    EXPECT_EQ(e["code"], "bad_audio");
    EXPECT_NE(e["message"].get<std::string>().find("s16le"), std::string::npos) << e.dump();
    EXPECT_EQ(code, 1007);
  }
  {  // a NaN sample
    const float nan = std::nanf("");
    auto [e, code] = expect_error(port_, start_msg, {{false, f32le_bytes(std::vector<float>{0.1f, nan})}});
    EXPECT_EQ(e["code"], "bad_audio");
    EXPECT_EQ(code, 1007);
  }
  {  // text where audio is expected
    auto [e, code] = expect_error(port_, start_msg, {{true, R"({"type": "source", "text": "hello "})"}});
    EXPECT_EQ(e["code"], "audio_expected");
    EXPECT_NE(e["message"].get<std::string>().find("binary frames"), std::string::npos) << e.dump();
    EXPECT_EQ(code, 1003);
  }
  {  // audio before start
    auto [e, code] = expect_error(port_, "", {{false, std::string(8, '\0')}});
    EXPECT_EQ(e["code"], "protocol");
    EXPECT_EQ(code, 1008);
  }
  {  // audio after end
    auto [e, code] =
        expect_error(port_, start_msg, {{true, R"({"type": "end"})"}, {false, std::string(8, '\0')}});
    EXPECT_TRUE(e.is_null() || e["code"] == "protocol") << e.dump();  // the empty stream may finish first
  }
  {  // bad start fields
    auto [e, code] = expect_error(port_, R"({"type": "start", "sample_rate": 100})", {});
    EXPECT_EQ(e["code"], "bad_message");
    EXPECT_NE(e["message"].get<std::string>().find("sample_rate"), std::string::npos) << e.dump();
    auto [e2, code2] = expect_error(port_, R"({"type": "start", "audio_format": "mp3"})", {});
    EXPECT_EQ(e2["code"], "bad_message");
    EXPECT_NE(e2["message"].get<std::string>().find("audio_format"), std::string::npos) << e2.dump();
  }
  // The server is still there and transcribes (the oracle ran before the server started).
  expect_same(stream_audio(port_, R"({"type": "start", "continuous": false})", f32le_bytes(x), 4096), want);
  EXPECT_EQ(server_->open_sessions(), 0);
}

TEST_F(SpeechServeTest, AudioToATextModelIsRefused) {
  start(/*speech=*/false);
  {
    auto [e, code] =
        expect_error(port_, R"({"type": "start"})", {{false, f32le_bytes(std::vector<float>(160))}});
    EXPECT_EQ(e["code"], "binary_frame");
    EXPECT_NE(e["message"].get<std::string>().find("text"), std::string::npos) << e.dump();
    EXPECT_EQ(code, 1003);
  }
  {
    auto [e, code] = expect_error(port_, R"({"type": "start", "sample_rate": 16000})", {});
    EXPECT_EQ(e["code"], "bad_options");
    EXPECT_NE(e["message"].get<std::string>().find("speech model"), std::string::npos) << e.dump();
  }
  {  // a text stream still works on the same server
    WsClient c(port_);
    c.send(R"({"type": "start"})");
    auto ready = c.read_json();
    ASSERT_TRUE(ready);
    EXPECT_EQ((*ready)["input"], "text");
    c.send(R"({"type": "source", "text": "hello world"})");
    c.send(R"({"type": "end"})");
    c.read_all();
    EXPECT_EQ(c.close_code(), 1000);
  }
}

TEST_F(SpeechServeTest, AServerRefusesAnEncoderOfTheWrongWidth) {
  speech_encoder::SpeechEncoderConfig ec;
  ec.conv_channels = 4;
  ec.d_model = 4;
  ec.n_layer = 0;
  ec.n_head = 1;
  ec.n_ff = 4;
  ec.chunk_frames = 2;
  ec.proj_hidden = 4;
  ec.llm_hidden = 8;  // not the LLM's 32
  speech_encoder::SpeechEncoderModel enc(ec);
  ServerOptions o;
  o.port = 0;
  o.speech_encoder = &enc;
  auto s = Server::start(model_->llm, defaults(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("32"), std::string::npos) << s.error().message();
}

}  // namespace
}  // namespace gpstream::serve
