// `gpstream transcribe -m MODEL --wav FILE|- [--raw --rate HZ [--channels N]] [-k K] [--phi F] [--pace X]
// [--delays] [-t THREADS]`: streaming speech recognition of audio files and streams. A file is read whole:
// WAV by gpstream's own reader, FLAC, Ogg, MP3 and the other formats libsndfile reads through libsndfile
// (audio/audio_file.h). `-` reads a WAV stream from stdin as it arrives (audio/wav_stream.h; a recorder's
// placeholder sizes read to the end), so `arecord ... | gpstream transcribe --wav -` writes words while the
// recording goes on; --raw reads headerless 16-bit little-endian PCM (stdin or files) the same way. Samples
// are resampled to 16 kHz (streaming: audio/resample_stream.h, the same samples as a whole-file resample) and
// go into a SegmentedTranscriber in 10 ms pieces, paced at X times real time with --pace (1 = real time),
// else as fast as they arrive and are computed. Recordings of any length: the audio is cut into utterances at
// pauses (audio/pause_detector.h), each transcribed on its own, so memory stays bounded; delays count from
// the start of the input. On a terminal (or with --live) each word is printed as it is written, growing one
// line per input; otherwise one finished transcript per line, or with --delays one JSON line per input:
// {"prediction": ..., "delays": [ms of audio consumed per word], "elapsed": [delay + computation ms]}.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "audio/audio_file.h"
#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/resample_stream.h"
#include "audio/wav_stream.h"
#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/install_paths.h"
#include "eval/instance_log.h"
#include "eval/python_format.h"
#include "speech/segmented_transcriber.h"

namespace gpstream::cli {
namespace {

constexpr size_t kPieceSamples = audio::kLogMelSampleRate / 100;  // 10 ms
constexpr size_t kReadBytes = size_t{1} << 16;                    // at most per read(2) of a stream

std::string json_numbers(const std::vector<speech::TranscribedWord>& words, bool elapsed) {
  std::string s = "[";
  for (size_t i = 0; i < words.size(); ++i)
    s += (i ? ", " : "") + eval::python_float_repr(elapsed ? words[i].elapsed_ms : words[i].delay_ms);
  return s + "]";
}

// Feeds 16 kHz samples to the transcriber in 10 ms pieces, at `pace` times real time when pace > 0 (a piece
// is due once its last sample has been spoken, counted from the first piece).
struct Feeder {
  speech::SegmentedTranscriber& transcriber;
  std::vector<speech::TranscribedWord>& words;
  double pace = 0;
  std::function<void()> show;
  double t0 = 0;
  uint64_t fed = 0;

  Status feed(const std::vector<float>& pcm) {
    for (size_t i = 0; i < pcm.size(); i += kPieceSamples) {
      const size_t n = std::min(kPieceSamples, pcm.size() - i);
      if (fed == 0) t0 = steady_ms();
      if (pace > 0) {
        const double due = t0 + static_cast<double>(fed + n) * 1000.0 / audio::kLogMelSampleRate / pace;
        const double wait = due - steady_ms();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(wait));
      }
      GPS_TRY(transcriber.push(pcm.data() + i, n, words));
      fed += n;
      show();
    }
    return {};
  }
};

// A whole file: read, resampled to 16 kHz, fed.
Status transcribe_file(const std::string& path, Feeder& feeder) {
  GPS_ASSIGN(audio::WavAudio wav, audio::read_audio_file(path));
  GPS_ASSIGN(auto pcm, audio::resample(wav.samples, wav.sample_rate, audio::kLogMelSampleRate));
  return feeder.feed(pcm);
}

// A stream (stdin or a raw file): each read(2) returns what has arrived; its whole frames are resampled and
// fed before the next read, so words come out while the writer is still writing. Reads to the end of the
// stream (or of a WAV data chunk of declared size).
Status transcribe_stream(int fd, audio::WavStream stream, Feeder& feeder) {
  std::optional<audio::ResampleStream> resampler;
  std::vector<std::byte> buf(kReadBytes);
  std::vector<float> mono, pcm;
  while (!stream.done()) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(stream.name() + ": read error (" + std::strerror(errno) + ")");
    if (n == 0) break;
    mono.clear();
    GPS_TRY(stream.push({buf.data(), static_cast<size_t>(n)}, mono));
    if (!resampler && stream.has_format()) {
      GPS_ASSIGN(resampler,
                 audio::ResampleStream::create(stream.format().sample_rate, audio::kLogMelSampleRate));
    }
    if (mono.empty()) continue;
    pcm.clear();
    resampler->push(mono, pcm);
    GPS_TRY(feeder.feed(pcm));
  }
  GPS_TRY(stream.finish());
  if (!resampler) return format_error(stream.name() + ": no audio format");  // finish() reports this first
  pcm.clear();
  resampler->finish(pcm);
  return feeder.feed(pcm);
}

int run_transcribe(int argc, char** argv) {
  CLI::App app{"Transcribe audio files and streams as live audio (streaming speech recognition)",
               "gpstream transcribe"};
  StreamCli o;
  std::vector<std::string> inputs;
  int k = 0;
  double pace = 0;
  bool delays = false, plain = false, live_flag = false, raw = false;
  uint32_t rate = 0;
  uint16_t channels = 1;
  app.add_option("-m,--model", o.model, "speech model directory (LLM + speech_encoder.safetensors)")
      ->required()
      ->transform(resolve_model_name);
  app.add_option("--wav,--audio", inputs,
                 "audio files to transcribe, one after the other (WAV, FLAC, Ogg, MP3, ...); - reads a WAV "
                 "stream from stdin as it arrives")
      ->required();
  app.add_flag("--raw", raw, "the inputs are headerless 16-bit little-endian PCM (needs --rate)");
  app.add_option("--rate", rate, "sample rate of --raw input in Hz")
      ->check(CLI::Range(audio::kWavMinSampleRate, audio::kWavMaxSampleRate));
  app.add_option("--channels", channels,
                 "channels of --raw input, interleaved (default 1; averaged into mono)")
      ->check(CLI::Range(1, static_cast<int>(audio::kWavMaxChannels)));
  app.add_option("-k,--wait-k", k, "wait-k lag in encoder chunks (default: the model's)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--phi", o.phi, "target group start position: a number >= 0 or S (default: the model's)");
  app.add_option("--paradigm", o.paradigm, "one of " + stream::paradigm_names() + " (default: the model's)");
  app.add_option("--pace", pace,
                 "feed the audio at X times real time (1 = real time; default: as fast as computed)");
  app.add_flag("--delays", delays, "print JSON lines: prediction, delays and elapsed (ms)");
  auto* plain_opt = app.add_flag("--plain", plain, "no live view even on a terminal");
  auto* delays_opt = app.get_option("--delays");
  app.add_flag("--live", live_flag,
               "the live view (each word as it is written) even when stdout is not a terminal")
      ->excludes(plain_opt)
      ->excludes(delays_opt);
  app.add_option("-t,--threads", o.threads,
                 "threads (default: all cores; one for models under 20M parameters)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-tokens", o.max_tokens, "target tokens per input at most")
      ->check(CLI::Range(1, 1 << 16));
  add_end_after_source_option(app, o);
  add_beam_option(app, o);
  add_policy_options(app, o);  // lags count encoder chunks, as -k does
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  if (app.count("--pace") && !(pace > 0 && pace <= 1000))
    return std::fprintf(stderr, "gpstream transcribe: --pace must be in (0, 1000]\n"), kExitUsage;
  if (std::count(inputs.begin(), inputs.end(), "-") > 1)
    return std::fprintf(stderr, "gpstream transcribe: stdin (-) can be read only once\n"), kExitUsage;
  if (raw && !app.count("--rate"))
    return std::fprintf(stderr, "gpstream transcribe: --raw needs --rate HZ\n"), kExitUsage;
  if (!raw && (app.count("--rate") || app.count("--channels")))
    return std::fprintf(stderr, "gpstream transcribe: --rate and --channels describe --raw input\n"),
           kExitUsage;

  auto model = speech::SpeechModel::load(o.model, o.threads);
  if (!model.ok()) return fail("transcribe", model.error());
  auto so = session_options(o, model->llm, k, o.paradigm);
  if (!so.ok())
    return std::fprintf(stderr, "gpstream transcribe: %s\n", so.error().message().c_str()), kExitUsage;
  auto transcriber = speech::SegmentedTranscriber::create(*model, *so);
  if (!transcriber.ok()) return fail("transcribe", transcriber.error());
  speech::SegmentedTranscriber& t = **transcriber;
  const bool live = live_flag || (isatty(STDOUT_FILENO) && !delays && !plain);

  for (const auto& path : inputs) {
    const std::string name = path == "-" ? "<stdin>" : path;
    if (Status st = t.reset(); !st.ok()) return fail("transcribe", st.error());
    std::vector<speech::TranscribedWord> words;
    size_t shown = 0;
    auto show = [&] {  // live view: print the words written since the last call
      if (!live) return;
      for (; shown < words.size(); ++shown) std::printf("%s%s", shown ? " " : "", words[shown].text.c_str());
      std::fflush(stdout);
    };
    Feeder feeder{t, words, pace, show};
    Status st;
    if (!raw && path != "-") {
      st = transcribe_file(path, feeder);
    } else {
      int fd = STDIN_FILENO;
      if (path != "-" && (fd = open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0)
        return fail("transcribe", io_error(path + ": cannot open (" + std::strerror(errno) + ")"));
      auto stream = raw ? audio::WavStream::raw(audio::WavSampleFormat::Int, 16, channels, rate, name)
                        : Result<audio::WavStream>(audio::WavStream::wav(name));
      st = stream.ok() ? transcribe_stream(fd, std::move(stream).value(), feeder) : Status(stream.error());
      if (fd != STDIN_FILENO) close(fd);
    }
    if (!st.ok()) return fail("transcribe", st.error());
    if (st = t.finish(words); !st.ok()) return fail("transcribe", st.error().with_context(name));
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
