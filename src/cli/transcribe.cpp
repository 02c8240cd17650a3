// `gpstream transcribe -m MODEL --wav FILE|- [-k K] [--phi F] [--pace X] [--delays] [-t THREADS]`: streaming
// speech recognition of WAV files (any PCM/float WAV, resampled to 16 kHz; `-` reads the WAV bytes from stdin).
// The audio goes into a SpeechTranscriber in 10 ms pieces, paced at X times real time with --pace (1 = real
// time), else as fast as it is computed. On a terminal each word is printed as it is written, growing one line
// per file; otherwise one finished transcript per line, or with --delays one JSON line per file:
// {"prediction": ..., "delays": [ms of audio consumed per word], "elapsed": [delay + computation ms]}.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/wav.h"
#include "cli/cli_util.h"
#include "cli/command.h"
#include "eval/instance_log.h"
#include "eval/python_format.h"
#include "speech/speech_transcriber.h"

namespace gpstream::cli {
namespace {

// A WAV file holds at most 4 GiB (32-bit RIFF sizes); stdin is read up to that.
constexpr size_t kMaxStdinBytes = size_t{4} << 30;
constexpr size_t kPieceSamples = audio::kLogMelSampleRate / 100;  // 10 ms

Result<std::vector<std::byte>> read_stdin() {
  std::vector<std::byte> bytes;
  std::byte buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, stdin);
    if (n == 0) break;
    if (bytes.size() + n > kMaxStdinBytes) return invalid_argument("<stdin>: more than 4 GiB, not a WAV file");
    bytes.insert(bytes.end(), buf, buf + n);
  }
  if (std::ferror(stdin)) return io_error("<stdin>: read error");
  return bytes;
}

// The file's audio as 16 kHz mono samples.
Result<std::vector<float>> load_audio(const std::string& path) {
  audio::WavAudio wav;
  if (path == "-") {
    GPS_ASSIGN(auto bytes, read_stdin());
    GPS_ASSIGN(wav, audio::read_wav(bytes, "<stdin>"));
  } else {
    GPS_ASSIGN(wav, audio::read_wav_file(path));
  }
  return audio::resample(wav.samples, wav.sample_rate, audio::kLogMelSampleRate);
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string json_numbers(const std::vector<speech::TranscribedWord>& words, bool elapsed) {
  std::string s = "[";
  for (size_t i = 0; i < words.size(); ++i)
    s += (i ? ", " : "") + eval::python_float_repr(elapsed ? words[i].elapsed_ms : words[i].delay_ms);
  return s + "]";
}

int run_transcribe(int argc, char** argv) {
  CLI::App app{"Transcribe WAV files as live audio streams (streaming speech recognition)", "gpstream transcribe"};
  StreamCli o;
  std::vector<std::string> wavs;
  int k = 0;
  double pace = 0;
  bool delays = false, plain = false;
  app.add_option("-m,--model", o.model, "speech model directory (LLM + speech_encoder.safetensors)")->required();
  app.add_option("--wav", wavs, "WAV files to transcribe, one after the other; - reads one from stdin")
      ->required();
  app.add_option("-k,--wait-k", k, "wait-k lag in encoder chunks (default: the model's)")->check(CLI::Range(1, 1000000));
  app.add_option("--phi", o.phi, "target group start position: a number >= 0 or S (default: the model's)");
  app.add_option("--paradigm", o.paradigm, "one of " + stream::paradigm_names() + " (default: the model's)");
  app.add_option("--pace", pace, "feed the audio at X times real time (1 = real time; default: as fast as computed)");
  app.add_flag("--delays", delays, "print JSON lines: prediction, delays and elapsed (ms)");
  app.add_flag("--plain", plain, "no live view even on a terminal");
  app.add_option("-t,--threads", o.threads, "threads (default: all cores; one for models under 20M parameters)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-tokens", o.max_tokens, "target tokens per file at most")->check(CLI::Range(1, 1 << 16));
  add_end_after_source_option(app, o);
  add_beam_option(app, o);
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  if (app.count("--pace") && !(pace > 0 && pace <= 1000))
    return std::fprintf(stderr, "gpstream transcribe: --pace must be in (0, 1000]\n"), kExitUsage;
  if (std::count(wavs.begin(), wavs.end(), "-") > 1)
    return std::fprintf(stderr, "gpstream transcribe: stdin (-) can be read only once\n"), kExitUsage;

  auto model = speech::SpeechModel::load(o.model, o.threads);
  if (!model.ok()) return fail("transcribe", model.error());
  auto so = session_options(o, model->llm, k, o.paradigm);
  if (!so.ok()) return std::fprintf(stderr, "gpstream transcribe: %s\n", so.error().message().c_str()), kExitUsage;
  auto transcriber = speech::SpeechTranscriber::create(*model, *so);
  if (!transcriber.ok()) return fail("transcribe", transcriber.error());
  speech::SpeechTranscriber& t = **transcriber;
  const bool live = isatty(STDOUT_FILENO) && !delays && !plain;

  for (const auto& path : wavs) {
    auto samples = load_audio(path);
    if (!samples.ok()) return fail("transcribe", samples.error());
    if (Status st = t.reset(); !st.ok()) return fail("transcribe", st.error());
    std::vector<speech::TranscribedWord> words;
    size_t shown = 0;
    auto show = [&] {  // live view: print the words written since the last call
      if (!live) return;
      for (; shown < words.size(); ++shown) std::printf("%s%s", shown ? " " : "", words[shown].text.c_str());
      std::fflush(stdout);
    };
    const double t0 = now_ms();
    const std::vector<float>& pcm = *samples;
    for (size_t i = 0, piece = 0; i < pcm.size(); i += kPieceSamples, ++piece) {
      if (pace > 0) {  // piece i has arrived once its last sample has been spoken
        const double due = t0 + 10.0 * static_cast<double>(piece + 1) / pace;
        const double wait = due - now_ms();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(wait));
      }
      if (Status st = t.push(pcm.data() + i, std::min(kPieceSamples, pcm.size() - i), words); !st.ok())
        return fail("transcribe", st.error().with_context(path));
      show();
    }
    if (Status st = t.finish(words); !st.ok()) return fail("transcribe", st.error().with_context(path));
    show();
    if (live) {
      std::printf("\n");
    } else if (delays) {
      std::printf("{\"prediction\": %s, \"delays\": %s, \"elapsed\": %s}\n",
                  eval::python_json_string(t.transcript()).c_str(), json_numbers(words, false).c_str(),
                  json_numbers(words, true).c_str());
    } else {
      std::printf("%s\n", t.transcript().c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("transcribe", "transcribe audio files and streams live (streaming speech recognition)",
                 "gpstream transcribe -m models/gpstream-speech-en --wav hello.wav",
                 gpstream::cli::run_transcribe);
