// Soak of one unbounded live stream (docs/performance.md, "Unbounded streams"): hours of input through one
// stream, simulated faster than real time with a virtual speaker's clock, and how it holds up over stream
// time: resident memory, latency (StreamLAAL) and computation per unit of stream time.
//   text:   the test set's sources, in order and again from the start, as one stream at PACE words/s through
//           one continuous Session (eval::translate_talk, what `eval --long-form` runs);
//   speech: a speech manifest's utterances, GAP_MS of silence apart, in order and again, as one recording
//           through speech::SegmentedTranscriber (what `transcribe` runs), 10 ms pieces.
// Every SAMPLE minutes of stream time it records VmRSS (/proc/self/status) and the computation so far. After
// the run, the hypothesis is scored in windows of WINDOW minutes of source: the sentences (utterances) that
// start in a window, and the hypothesis words whose delay falls in it, resegmented onto them (mwerSegmenter's
// criterion, eval/long_form.h) — one resegmentation over two hours would exceed its cell limit — giving that
// window's StreamLAAL (source words for text, ms for speech). Prints a table and a summary: RSS at the end
// against after the first 5 minutes, StreamLAAL of the last window against the first, the real-time factor;
// --tsv FILE writes the samples and --svg PREFIX two plots (RSS, StreamLAAL over stream time).
//   bench_long_stream --text -m models/gpstream-en-fr --tsv data/corpus/en-fr.dev.tsv [--hours 2]
//                     [--pace 2.5] [-k K] [--no-punctuation] [--sentence-ends model|punctuation]
//           (--no-punctuation takes the sources' punctuation off; sentence ends are the model's where there
//           is none, as `eval --long-form` decides them, unless --sentence-ends punctuation)
//   bench_long_stream --speech -m models/gpstream-speech-en --manifest M [--hours 2] [--gap-ms 800]
//   common: [--sample-minutes 5] [--window-minutes 10] [--tsv FILE] [--svg PREFIX] [-t THREADS]
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "audio/audio_file.h"
#include "audio/log_mel.h"
#include "audio/resample.h"
#include "eval/long_form.h"
#include "eval/long_form_talks.h"
#include "eval/plot.h"
#include "kernels/blas_kernels.h"
#include "speech/segmented_transcriber.h"
#include "speech/speech_manifest.h"
#include "stream/streaming_model.h"
#include "tokenizer/segment_encoder.h"
#include "util/clock.h"

using namespace gpstream;

namespace {

struct Args {
  bool text = false, speech = false;
  std::string model, tsv, manifest, tsv_out, svg_prefix;
  double hours = 2, pace = 2.5, gap_ms = 800, sample_min = 5, window_min = 10;
  int k = 0, threads = 1;
  bool no_punctuation = false;      // text: the sources' punctuation taken off (as live ASR output comes)
  bool model_sentence_ends = true;  // text: the model decides sentence ends where there is no punctuation
};

// A field of /proc/self/status in MB: VmRSS (resident), RssAnon (resident and not backed by a file: what the
// process allocated) or RssFile (resident pages of mapped files: the model's weights as they are touched).
double status_mb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
      return std::strtod(line.c_str() + n + 1, nullptr) / 1024.0;
  return 0;
}

// AnonHugePages of /proc/self/smaps_rollup in MB: anonymous memory the kernel backs with 2 MiB pages
// (transparent huge pages; huge_page_buffer asks for them), which khugepaged may fill in at any later time.
double huge_mb() {
  std::ifstream f("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("AnonHugePages:", 0) == 0) return std::strtod(line.c_str() + 14, nullptr) / 1024.0;
  return 0;
}

// Bytes the allocator has handed out and not had back (glibc's mallinfo2: heap and mmapped blocks).
double heap_mb() {
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
}

struct Sample {
  double stream_min = 0, rss_mb = 0, compute_s = 0, heap_mb = 0, anon_mb = 0, file_mb = 0, huge_mb = 0;
};

// Samples are taken when stream time passes each multiple of sample_min.
struct Sampler {
  explicit Sampler(double every) : every_min(every) {}
  double every_min;
  double t0 = steady_seconds();
  std::vector<Sample> samples;
  void at(double stream_min) {
    while (stream_min >= every_min * static_cast<double>(samples.size() + 1))
      samples.push_back({every_min * static_cast<double>(samples.size() + 1), status_mb("VmRSS"),
                         steady_seconds() - t0, heap_mb(), status_mb("RssAnon"), status_mb("RssFile"),
                         huge_mb()});
  }
};

struct Window {
  double start_min = 0;
  double laal = NAN;
  size_t sentences = 0, empty = 0;
};

// StreamLAAL per window of source: sentence i spans [starts[i], starts[i] + lengths[i]) of the stream
// (source units), word j has delays[j]. A window takes the sentences that start in it and the words whose
// delay is in [its first sentence's start, the next window's first sentence's start).
std::vector<Window> window_laal(const eval::LongFormRun& run, double units_per_min, double window_min) {
  std::vector<double> starts;
  double s = 0;
  for (double len : run.source_lengths) starts.push_back(s), s += len;
  std::vector<Window> out;
  size_t i = 0, j = 0;
  while (i < starts.size()) {
    const double w0 = std::floor(starts[i] / units_per_min / window_min) * window_min;
    const double w1 = w0 + window_min;
    size_t i_end = i;
    while (i_end < starts.size() && starts[i_end] < w1 * units_per_min) ++i_end;
    const double unit_end = i_end < starts.size() ? starts[i_end] : s + 1e300;
    eval::LongFormRun part;
    part.unit = run.unit;
    const double base = starts[i];
    for (size_t k = i; k < i_end; ++k) {
      part.source_lengths.push_back(run.source_lengths[k]);
      part.references.push_back(run.references[k]);
    }
    while (j < run.words.size() && run.delays[j] < unit_end) {
      part.words.push_back(run.words[j]);
      part.delays.push_back(std::max(0.0, run.delays[j] - base));
      ++j;
    }
    // Delays are relative to the window's first sentence; none may pass the window's source.
    double total = 0;
    for (double len : part.source_lengths) total += len;
    for (double& d : part.delays) d = std::min(d, total);
    Window w;
    w.start_min = w0;
    w.sentences = i_end - i;
    auto sc = eval::score_long_form(part);
    if (sc.ok() && sc->laal.mean) {
      w.laal = *sc->laal.mean;
      w.empty = sc->laal.empty_sentences;
    }
    out.push_back(w);
    i = i_end;
  }
  return out;
}

int run_text(const Args& a, Sampler& sampler, eval::LongFormRun& run, double& stream_min) {
  auto m = stream::StreamingModel::load(a.model, a.threads);
  if (!m.ok()) return std::fprintf(stderr, "%s\n", m.error().message().c_str()), 1;
  auto pairs = eval::read_test_tsv(a.tsv);
  if (!pairs.ok()) return std::fprintf(stderr, "%s\n", pairs.error().message().c_str()), 1;
  const double want_words = a.hours * 3600.0 * a.pace;
  std::vector<eval::TestPair> talk;
  double words = 0;
  for (size_t i = 0; words < want_words; i = (i + 1) % pairs->size()) {
    const double n = static_cast<double>(tokenizer::split_words((*pairs)[i].source).size());
    if (n == 0 || eval::long_form_words((*pairs)[i].reference).empty()) continue;
    talk.push_back((*pairs)[i]);
    if (a.no_punctuation) talk.back().source = eval::strip_punctuation(talk.back().source);
    words += n;
  }
  stream::SessionOptions so = m->default_options();
  if (a.model_sentence_ends) so.sentence_ends = m->sentence_ends();  // as `eval --long-form` by default
  if (a.k > 0) so.k = a.k;
  std::fprintf(stderr, "text: %zu sentences, %.0f words, %.1f minutes at %g words/s%s; sentence ends: %s\n",
               talk.size(), words, words / a.pace / 60.0, a.pace, a.no_punctuation ? ", no punctuation" : "",
               so.sentence_ends ? "the model's and punctuation" : "punctuation and the word limit");
  auto r = eval::translate_talk(*m->model, *m->codec, so, talk, a.pace, [&](size_t done, size_t) {
    sampler.at(static_cast<double>(done) / a.pace / 60.0);
  });
  if (!r.ok()) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
  run = std::move(r).value();
  stream_min = words / a.pace / 60.0;
  return 0;
}

int run_speech(const Args& a, Sampler& sampler, eval::LongFormRun& run, double& stream_min) {
  auto m = speech::SpeechModel::load(a.model, a.threads);
  if (!m.ok()) return std::fprintf(stderr, "%s\n", m.error().message().c_str()), 1;
  auto manifest = speech::read_speech_manifest(a.manifest);
  if (!manifest.ok()) return std::fprintf(stderr, "%s\n", manifest.error().message().c_str()), 1;
  std::vector<std::vector<float>> audio;
  for (const auto& u : manifest->utterances) {
    auto wav = audio::read_audio_file(u.wav_path);
    if (!wav.ok()) return std::fprintf(stderr, "%s\n", wav.error().message().c_str()), 1;
    auto pcm = audio::resample(wav->samples, wav->sample_rate, audio::kLogMelSampleRate);
    if (!pcm.ok()) return std::fprintf(stderr, "%s\n", pcm.error().message().c_str()), 1;
    audio.push_back(std::move(pcm).value());
  }
  auto t = speech::SegmentedTranscriber::create(*m, m->llm.default_options());
  if (!t.ok()) return std::fprintf(stderr, "%s\n", t.error().message().c_str()), 1;
  const double rate = audio::kLogMelSampleRate;
  const size_t gap = static_cast<size_t>(a.gap_ms * rate / 1000.0);
  const std::vector<float> silence(gap, 0.0f);
  const double want_samples = a.hours * 3600.0 * rate;
  std::vector<speech::TranscribedWord> words;
  double pushed = 0;
  auto push = [&](const std::vector<float>& x) -> bool {
    for (size_t i = 0; i < x.size(); i += 160) {
      if (!(*t)->push(x.data() + i, std::min<size_t>(160, x.size() - i), words).ok()) return false;
      pushed += static_cast<double>(std::min<size_t>(160, x.size() - i));
      sampler.at(pushed / rate / 60.0);
    }
    return true;
  };
  run.unit = eval::LongFormUnit::Ms;
  for (size_t i = 0; pushed < want_samples; i = (i + 1) % audio.size()) {
    if (!push(audio[i]) || !push(silence)) return std::fprintf(stderr, "transcription failed\n"), 1;
    run.source_lengths.push_back(static_cast<double>(audio[i].size() + gap) * 1000.0 / rate);
    run.references.push_back(manifest->utterances[i].transcript);
  }
  if (!(*t)->finish(words).ok()) return std::fprintf(stderr, "transcription failed\n"), 1;
  sampler.at(pushed / rate / 60.0);
  double total_ms = 0;
  for (double len : run.source_lengths) total_ms += len;
  for (const auto& w : words) {
    for (const std::string& piece : eval::long_form_words(w.text)) {
      run.words.push_back(piece);
      run.delays.push_back(std::min(w.delay_ms, total_ms));
    }
  }
  stream_min = pushed / rate / 60.0;
  return 0;
}

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto num = [&](double& v) {
      const char* x = next();
      return x && (v = std::strtod(x, nullptr), std::isfinite(v) && v > 0);
    };
    bool ok = true;
    if (s == "--text")
      a.text = true;
    else if (s == "--speech")
      a.speech = true;
    else if (s == "-m")
      ok = (a.model = next() ? argv[i] : "", !a.model.empty());
    else if (s == "--tsv")
      ok = (a.tsv = next() ? argv[i] : "", !a.tsv.empty());
    else if (s == "--manifest")
      ok = (a.manifest = next() ? argv[i] : "", !a.manifest.empty());
    else if (s == "--tsv-out")
      ok = (a.tsv_out = next() ? argv[i] : "", !a.tsv_out.empty());
    else if (s == "--svg")
      ok = (a.svg_prefix = next() ? argv[i] : "", !a.svg_prefix.empty());
    else if (s == "--hours")
      ok = num(a.hours);
    else if (s == "--pace")
      ok = num(a.pace);
    else if (s == "--gap-ms")
      ok = num(a.gap_ms);
    else if (s == "--sample-minutes")
      ok = num(a.sample_min);
    else if (s == "--window-minutes")
      ok = num(a.window_min);
    else if (s == "-k")
      ok = (next() && (a.k = std::atoi(argv[i])) > 0);
    else if (s == "--no-punctuation")
      a.no_punctuation = true;
    else if (s == "--sentence-ends")
      ok = next() && (std::string(argv[i]) == "model" || std::string(argv[i]) == "punctuation") &&
           ((a.model_sentence_ends = std::string(argv[i]) == "model"), true);
    else if (s == "-t")
      ok = (next() && (a.threads = std::atoi(argv[i])) > 0);
    else
      ok = false;
    if (!ok) return std::fprintf(stderr, "bench_long_stream: bad argument '%s'\n", s.c_str()), false;
  }
  if (a.text == a.speech || a.model.empty() || (a.text && a.tsv.empty()) ||
      (a.speech && a.manifest.empty())) {
    std::fprintf(
        stderr,
        "usage: bench_long_stream --text -m MODEL --tsv FILE | --speech -m MODEL --manifest FILE\n"
        "       [--hours H] [--pace W] [--gap-ms MS] [-k K] [--sample-minutes M] [--window-minutes M]\n"
        "       [--tsv-out FILE] [--svg PREFIX] [-t THREADS]\n"
        "       text: [--no-punctuation] [--sentence-ends model|punctuation]\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kernels::use_fast_blas_kernels(argv);
  Args a;
  if (!parse(argc, argv, a)) return 2;
  Sampler sampler(a.sample_min);
  eval::LongFormRun run;
  double stream_min = 0;
  const int rc = a.text ? run_text(a, sampler, run, stream_min) : run_speech(a, sampler, run, stream_min);
  if (rc) return rc;
  const double compute_s = steady_seconds() - sampler.t0;
  const double units_per_min = a.text ? a.pace * 60.0 : 60000.0;
  const std::vector<Window> windows = window_laal(run, units_per_min, a.window_min);
  const char* unit = a.text ? "words" : "ms";

  std::printf("%-12s %8s %9s %9s %9s %8s %12s\n", "stream min", "RSS MB", "anon MB", "huge MB", "file MB",
              "heap MB", "compute s");
  for (const Sample& s : sampler.samples)
    std::printf("%-12.0f %8.1f %9.1f %9.1f %9.1f %8.1f %12.1f\n", s.stream_min, s.rss_mb, s.anon_mb,
                s.huge_mb, s.file_mb, s.heap_mb, s.compute_s);
  std::printf("\n%-12s %10s %10s %7s\n", "window min", "sentences", "StreamLAAL", "empty");
  for (const Window& w : windows)
    std::printf("%-12.0f %10zu %10.3f %7zu\n", w.start_min, w.sentences, w.laal, w.empty);
  const double rss5 = sampler.samples.empty() ? 0 : sampler.samples.front().rss_mb;
  const double rss_end = sampler.samples.empty() ? 0 : sampler.samples.back().rss_mb;
  // The last window is complete only if the stream filled it.
  const Window& first = windows.front();
  const Window& last = windows.size() > 1 && windows.back().start_min + a.window_min > stream_min + 1e-9
                           ? windows[windows.size() - 2]
                           : windows.back();
  std::printf("\nstream %.1f min, computation %.1f s: real-time factor %.4f\n", stream_min, compute_s,
              compute_s / (stream_min * 60.0));
  std::printf("RSS: %.1f MB after %.0f min, %.1f MB at the end (%+.2f%%)\n", rss5, a.sample_min, rss_end,
              100.0 * (rss_end - rss5) / rss5);
  const double anon5 = sampler.samples.empty() ? 0 : sampler.samples.front().anon_mb;
  const double anon_end = sampler.samples.empty() ? 0 : sampler.samples.back().anon_mb;
  std::printf("RssAnon (allocated, not file pages): %.1f MB after %.0f min, %.1f MB at the end (%+.2f%%)\n",
              anon5, a.sample_min, anon_end, 100.0 * (anon_end - anon5) / anon5);
  std::printf("StreamLAAL (%s): first window %.3f, last full window (from minute %.0f) %.3f (%+.2f%%)\n",
              unit, first.laal, last.start_min, last.laal, 100.0 * (last.laal - first.laal) / first.laal);

  if (!a.tsv_out.empty()) {
    std::ofstream f(a.tsv_out);
    f << "stream_min\trss_mb\trss_anon_mb\trss_file_mb\theap_mb\tcompute_s\n";
    for (const Sample& s : sampler.samples)
      f << s.stream_min << '\t' << s.rss_mb << '\t' << s.anon_mb << '\t' << s.file_mb << '\t' << s.heap_mb
        << '\t' << s.compute_s << '\n';
    f << "\nwindow_min\tsentences\tstream_laal\tempty\n";
    for (const Window& w : windows)
      f << w.start_min << '\t' << w.sentences << '\t' << w.laal << '\t' << w.empty << '\n';
  }
  if (!a.svg_prefix.empty()) {
    eval::PlotSpec rss{"Resident memory over stream time", "stream time (min)", "RSS (MB)", {}};
    rss.series.push_back({a.text ? "text stream" : "audio stream", {}, false});
    for (const Sample& s : sampler.samples) rss.series.back().points.push_back({s.stream_min, s.rss_mb, ""});
    std::ofstream(a.svg_prefix + "-rss.svg") << eval::render_svg(rss);
    eval::PlotSpec laal{"StreamLAAL per window over stream time",
                        "window start (min)",
                        std::string("StreamLAAL (") + (a.text ? "source words" : "ms") + ")",
                        {}};
    laal.series.push_back({a.text ? "text stream" : "audio stream", {}, false});
    for (const Window& w : windows) laal.series.back().points.push_back({w.start_min, w.laal, ""});
    std::ofstream(a.svg_prefix + "-laal.svg") << eval::render_svg(laal);
  }
  return 0;
}
