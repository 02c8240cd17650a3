// Shared command-line helpers.
#include "cli/cli_util.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace gpstream::cli {
namespace {

template <typename T>
Result<std::vector<T>> parse_list(const std::string& s, const std::string& what) {
  std::vector<T> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    T v{};
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      return invalid_argument(what + ": '" + item + "' is not a valid number");
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<int32_t>> parse_int_list(const std::string& s, const std::string& what) {
  return parse_list<int32_t>(s, what);
}

Result<std::vector<float>> parse_float_list(const std::string& s, const std::string& what) {
  GPS_ASSIGN(auto v, parse_list<float>(s, what));
  for (float x : v)
    if (!std::isfinite(x)) return invalid_argument(what + ": positions must be finite");
  return v;
}

std::string format_float(float x) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  (void)ec;
  return std::string(buf, p);
}

std::string format_hms(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = std::lround(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void progress_bar(const std::string& label, size_t done, size_t total, double started_s) {
  const double now = steady_seconds() - started_s;
  const double eta = done ? now / static_cast<double>(done) * static_cast<double>(total - done) : 0;
  const int width = 30, fill = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r\033[K%s [%s%s] %zu/%zu  %.0fs elapsed, ETA %.0fs", label.c_str(),
               std::string(fill, '#').c_str(), std::string(width - fill, '.').c_str(), done, total, now, eta);
  if (done == total) std::fputc('\n', stderr);
}

}  // namespace gpstream::cli

namespace gpstream::cli {

void add_stream_options(CLI::App& app, StreamCli& o, bool with_paradigm) {
  app.add_option("-m,--model", o.model, "model: a Hugging Face directory (with tokenizer.json, optional gpstream.json) or a .gguf file")
      ->required();
  app.add_option("--phi", o.phi, "target group start position: a number >= 0 or S (default: the model's)");
  if (with_paradigm)
    app.add_option("--paradigm", o.paradigm, "one of " + stream::paradigm_names() + " (default: the model's)");
  app.add_option("--template", o.template_name, "prompt template: gpstream, qwen, llama3, gemma2, phi3 (default: the model's)");
  app.add_option("--src-lang", o.src_lang, "source language code (default: the model's)");
  app.add_option("--tgt-lang", o.tgt_lang, "target language code (default: the model's)");
  app.add_option("-t,--threads", o.threads, "threads (default: all cores; one for models under 20M parameters)")->check(CLI::Range(0, 1024));
  app.add_option("--max-tokens", o.max_tokens, "target tokens per sentence at most")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--temperature", o.temperature, "sampling temperature (0 = greedy)")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", o.top_k, "sample from the k most likely tokens (0 = off)")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", o.top_p, "nucleus sampling mass (1 = off)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--repetition-penalty", o.repetition_penalty, "penalty on generated tokens (1 = off)")
      ->check(CLI::Range(0.01, 100.0));
  app.add_option("--seed", o.seed, "sampling seed");
  add_end_after_source_option(app, o);
  add_beam_option(app, o);
}

void add_beam_option(CLI::App& app, StreamCli& o) {
  app.add_option("--beam", o.beam,
                 "word beam search: choose each word as the most probable of N hypotheses grown token by token "
                 "(1 = token by token; needs greedy decoding; default: the model's)")
      ->check(CLI::Range(1, 1024));
}

void add_end_after_source_option(CLI::App& app, StreamCli& o) {
  app.add_option("--end-after-source", o.end_after_source,
                 "on: the end marker only once the whole source is read (a transcript ends with the audio); "
                 "off: wait-k's min(k + N, M + 1) (default: the model's)")
      ->check(CLI::IsMember({"on", "off"}));
}

Result<stream::StreamingModel> load_stream_model(const StreamCli& o) {
  return stream::StreamingModel::load(o.model, o.threads, o.template_name, o.src_lang, o.tgt_lang);
}

Result<stream::SessionOptions> session_options(const StreamCli& o, const stream::StreamingModel& m, int k,
                                               const std::string& paradigm) {
  stream::SessionOptions so = m.default_options();
  if (k >= 1) so.k = k;
  if (!paradigm.empty()) {
    auto p = stream::parse_paradigm(paradigm);
    if (!p) return invalid_argument("--paradigm: unknown '" + paradigm + "' (known: " + stream::paradigm_names() + ")");
    so.paradigm = *p;
  }
  if (!o.phi.empty()) {
    auto phi = stream::Phi::parse(o.phi);
    if (!phi) return invalid_argument("--phi: expected a number >= 0 or S, got '" + o.phi + "'");
    so.phi = *phi;
  }
  if (!o.end_after_source.empty()) so.end_after_source = o.end_after_source == "on";
  so.max_target_tokens = o.max_tokens;
  so.decoding = {o.temperature, o.top_k, o.top_p, o.repetition_penalty, o.seed};
  if (o.beam > 0) so.beam = o.beam;
  if (so.beam > 1 && (o.temperature > 0 || o.repetition_penalty != 1.0f))
    return invalid_argument("--beam " + std::to_string(so.beam) +
                            " (word beam search) needs greedy decoding: no --temperature, no --repetition-penalty" +
                            (o.beam > 0 ? "" : " (the beam is the model's default; --beam 1 turns it off)"));
  return so;
}

}  // namespace gpstream::cli
