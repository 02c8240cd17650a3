// The streaming speech encoder across concurrent streams (docs/performance.md): N streams each get one
// encoder chunk of log-mel frames per round (what `gpstream serve` gives N real-time audio streams), and the
// chunks go through the Transformer either stream by stream (one pass per stream, ~chunk_frames rows per
// matrix product: the server before batching) or in one stacked pass over all streams
// (SpeechEncoderStream::run_ready_chunks: what the server's engine does now). The front end (log-mel frames
// → subsampling convolutions) is the same work in both and is timed apart. Usage:
//   bench_speech_encoder [-m speech_encoder.safetensors] [--streams 1,4,16,64] [--rounds R] [-t THREADS]
// Default model: models/gpstream-speech-en/speech_encoder.safetensors; default threads 1 (the server's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/blas_kernels.h"
#include "speech_encoder/speech_encoder_params.h"
#include "speech_encoder/speech_encoder_stream.h"

using namespace gpstream;
using speech_encoder::SpeechEncoderStream;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double front_s = 0, transformer_s = 0;
  size_t rows = 0;
};

// `rounds` rounds of one chunk per stream; batched or stream by stream.
Timing run(const speech_encoder::SpeechEncoderModel& model, int n_streams, int rounds, bool batched,
           int threads, const std::vector<float>& mel) {
  const auto& c = model.config();
  const size_t per_chunk = static_cast<size_t>(c.mel_frames_per_chunk()), M = static_cast<size_t>(c.n_mels);
  const size_t total_frames = mel.size() / M;
  std::vector<std::unique_ptr<SpeechEncoderStream>> streams;
  std::vector<SpeechEncoderStream*> ptrs;
  std::vector<std::vector<float>> outs(static_cast<size_t>(n_streams));
  std::vector<std::vector<float>*> out_ptrs;
  for (int i = 0; i < n_streams; ++i) {
    streams.push_back(std::make_unique<SpeechEncoderStream>(model, threads));
    ptrs.push_back(streams.back().get());
    out_ptrs.push_back(&outs[static_cast<size_t>(i)]);
  }
  Timing t;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now_s();
    for (int i = 0; i < n_streams; ++i) {  // streams at different offsets into the audio
      const size_t f = (static_cast<size_t>(r) * per_chunk + static_cast<size_t>(i) * 37 * per_chunk / 10) %
                       (total_frames - per_chunk);
      ptrs[static_cast<size_t>(i)]->feed(mel.data() + f * M, per_chunk);
    }
    const double t1 = now_s();
    if (batched) {
      t.rows += SpeechEncoderStream::run_ready_chunks(ptrs, out_ptrs);
    } else {
      for (int i = 0; i < n_streams; ++i)
        t.rows += SpeechEncoderStream::run_ready_chunks({&ptrs[static_cast<size_t>(i)], 1},
                                                        {&out_ptrs[static_cast<size_t>(i)], 1});
    }
    t.front_s += t1 - t0;
    t.transformer_s += now_s() - t1;
    for (auto& o : outs) o.clear();
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  std::string path =
      std::string(GPSTREAM_SOURCE_DIR_STR) + "/models/gpstream-speech-en/speech_encoder.safetensors";
  std::vector<int> levels = {1, 4, 16, 64};
  int rounds = 50, threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-m" && i + 1 < argc) {
      path = argv[++i];
    } else if (a == "--streams" && i + 1 < argc) {
      levels.clear();
      for (std::string s = argv[++i]; !s.empty();) {
        const size_t comma = s.find(',');
        levels.push_back(std::max(1, std::stoi(s.substr(0, comma))));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::stoi(argv[++i]));
    } else if (a == "-t" && i + 1 < argc) {
      threads = std::max(1, std::stoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: bench_speech_encoder [-m speech_encoder.safetensors] [--streams 1,4,16,64] "
                   "[--rounds R] [-t THREADS]\n");
      return 2;
    }
  }
  auto model = speech_encoder::SpeechEncoderModel::load(path);
  if (!model.ok()) {
    std::fprintf(stderr, "bench_speech_encoder: %s\n", model.error().message().c_str());
    return 1;
  }
  const auto& c = model->config();
  // Log-mel-like input (around -8, spread 4): the cost does not depend on the values.
  std::mt19937 rng(1);
  std::normal_distribution<float> d(-8.0f, 4.0f);
  std::vector<float> mel(static_cast<size_t>(c.n_mels * 3000));  // 30 s
  for (auto& x : mel) x = d(rng);
  std::printf(
      "speech encoder: d_model %lld, %lld layers, chunk %lld frames (%lld ms), %d thread(s), %d rounds\n",
      static_cast<long long>(c.d_model), static_cast<long long>(c.n_layer),
      static_cast<long long>(c.chunk_frames), static_cast<long long>(c.mel_frames_per_chunk() * 10), threads,
      rounds);
  std::printf("%8s %14s %14s %14s %8s\n", "streams", "front_ms/rnd", "separate_ms", "batched_ms", "ratio");
  for (int n : levels) {
    run(*model, n, 3, true, threads, mel);  // warm-up
    const Timing sep = run(*model, n, rounds, false, threads, mel);
    const Timing bat = run(*model, n, rounds, true, threads, mel);
    if (sep.rows != bat.rows) {
      std::fprintf(stderr, "bench_speech_encoder: row counts differ\n");
      return 1;
    }
    const double sep_ms = 1e3 * sep.transformer_s / rounds, bat_ms = 1e3 * bat.transformer_s / rounds;
    std::printf("%8d %14.3f %14.3f %14.3f %8.2f\n", n, 1e3 * (sep.front_s + bat.front_s) / (2 * rounds),
                sep_ms, bat_ms, sep_ms / bat_ms);
  }
  return 0;
}
