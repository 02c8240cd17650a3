// Shared command-line helpers.
#include "cli/cli_util.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/install_paths.h"
#include "tokenizer/tokenizer.h"

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

std::string format_fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
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
  app.add_option(
         "-m,--model", o.model,
         "model: a Hugging Face directory (with tokenizer.json, optional gpstream.json) or a .gguf file")
      ->required()
      ->transform(resolve_model_name);
  app.add_option("--phi", o.phi, "target group start position: a number >= 0 or S (default: the model's)");
  if (with_paradigm)
    app.add_option("--paradigm", o.paradigm,
                   "one of " + stream::paradigm_names() + " (default: the model's)");
  app.add_option("--template", o.template_name,
                 "prompt template: gpstream, qwen, llama3, gemma2, phi3 (default: the model's)")
      ->check(CLI::IsMember(tokenizer::Template::builtin_names()));
  app.add_option(
      "--src-lang", o.src_lang,
      "source language code; one the model's gpstream.json names, any without one (default: the model's)");
  app.add_option(
      "--tgt-lang", o.tgt_lang,
      "target language code; one the model's gpstream.json names, any without one (default: the model's)");
  app.add_option("-t,--threads", o.threads,
                 "threads (default: all cores; one for models under 20M parameters)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-tokens", o.max_tokens, "target tokens per sentence at most")
      ->check(CLI::Range(1, stream::kMaxTokensLimit))
      ->capture_default_str();
  app.add_option("--sentence-ends", o.sentence_ends,
                 "where sentences end in text without punctuation: model (once " +
                     std::to_string(stream::kDefaultModelSentenceEndsAfter) +
                     " words in a row held no sentence end, the model decides; docs/streaming.md) or "
                     "punctuation (only punctuation, and a cut every " +
                     std::to_string(stream::kDefaultMaxSegmentWords) + " words)")
      ->check(CLI::IsMember({"model", "punctuation"}))
      ->capture_default_str();
  app.add_option("--sentence-end-bias", o.sentence_end_bias,
                 "with --sentence-ends model: log-odds the model's sentence end must win by (higher: fewer "
                 "ends)")
      ->check(CLI::Range(-stream::kMaxSentenceEndBias, stream::kMaxSentenceEndBias))
      ->capture_default_str();
  app.add_option("--sentence-end-lookahead", o.sentence_end_lookahead,
                 "with --sentence-ends model: on (the model also sees the word after the one it decides "
                 "before, which waits for it) or off (one word less of latency, less accurate ends)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--temperature", o.temperature, "sampling temperature (0 = greedy)")
      ->check(CLI::Range(0.0, stream::kMaxTemperature));
  app.add_option("--top-k", o.top_k, "sample from the k most likely tokens (0 = off)")
      ->check(CLI::Range(0, stream::kMaxTopK));
  app.add_option("--top-p", o.top_p, "nucleus sampling mass (1 = off)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--repetition-penalty", o.repetition_penalty, "penalty on generated tokens (1 = off)")
      ->check(CLI::Range(stream::kMinRepetitionPenalty, stream::kMaxRepetitionPenalty));
  app.add_option("--seed", o.seed, "sampling seed");
  add_end_after_source_option(app, o);
  add_beam_option(app, o);
}

void add_beam_option(CLI::App& app, StreamCli& o) {
  app.add_option(
         "--beam", o.beam,
         "word beam search: choose each word as the most probable of N hypotheses grown token by token "
         "(1 = token by token; needs greedy decoding; default: the model's)")
      ->check(CLI::Range(1, stream::kMaxBeam));
}

Result<std::vector<SweepPoint>> eval_settings(const StreamCli& o, const stream::ModelMeta& meta,
                                              const std::vector<int>& ks, const PolicySweep& sweep) {
  const stream::PolicyKind policy =
      o.policy.empty() ? meta.policy.kind : *stream::parse_policy_name(o.policy);
  const std::string name = stream::policy_name(policy);
  if (policy != stream::PolicyKind::WaitK && !ks.empty())
    return invalid_argument("-k sets wait-k's lag, and the policy is " + name + ": give " +
                            (policy == stream::PolicyKind::Confidence ? "--tau"
                             : policy == stream::PolicyKind::AlignAtt ? "--frames"
                                                                      : "--min-lag and --max-lag") +
                            ", or --policy wait-k");
  if (policy != stream::PolicyKind::Confidence && !sweep.taus.empty())
    return invalid_argument("--tau sets the confidence policy, and the policy is " + name +
                            ": add --policy confidence");
  if (policy != stream::PolicyKind::AlignAtt && !sweep.frames.empty())
    return invalid_argument("--frames sets the alignatt policy, and the policy is " + name +
                            ": add --policy alignatt");
  std::vector<SweepPoint> settings;
  switch (policy) {
    case stream::PolicyKind::LocalAgreement:
      settings.push_back({});
      break;
    case stream::PolicyKind::Confidence:
      for (double tau : sweep.taus.empty() ? std::vector<double>{-1} : sweep.taus)
        settings.push_back({.tau = tau});
      break;
    case stream::PolicyKind::AlignAtt:
      for (int f : sweep.frames.empty() ? std::vector<int>{0} : sweep.frames)
        settings.push_back({.frames = f});
      break;
    case stream::PolicyKind::WaitK:
      for (int k : ks.empty() ? std::vector<int>{meta.k} : ks) settings.push_back({.k = k});
      break;
  }
  return settings;
}

std::string setting_label(const stream::SessionOptions& so) {
  const std::string paradigm = stream::paradigm_name(so.paradigm);
  if (so.paradigm == stream::Paradigm::Offline) return paradigm;
  return paradigm + stream::policy_folder_suffix(so.policy, so.k);
}

std::string policy_json_members(const stream::PolicySpec& spec, int k) {
  if (spec.kind == stream::PolicyKind::WaitK) return "\"k\": " + std::to_string(k);
  std::string j = "\"policy\": \"" + std::string(stream::policy_name(spec.kind)) + "\"";
  if (spec.kind == stream::PolicyKind::Confidence) j += ", \"tau\": " + stream::policy_setting(spec, k);
  if (spec.kind == stream::PolicyKind::LocalAgreement)
    j += ", \"agreement\": " + std::to_string(spec.agreement);
  if (spec.kind == stream::PolicyKind::AlignAtt) {
    j += ", \"frames\": " + std::to_string(spec.frames);
    if (!spec.layers.empty()) {
      j += ", \"layers\": [";
      for (size_t i = 0; i < spec.layers.size(); ++i) j += (i ? ", " : "") + std::to_string(spec.layers[i]);
      j += "]";
    }
  }
  return j + ", \"min_lag\": " + std::to_string(spec.min_lag) +
         ", \"max_lag\": " + std::to_string(spec.max_lag);
}

void add_policy_options(CLI::App& app, StreamCli& o, PolicySweep* sweep) {
  app.add_option(
         "--policy", o.policy,
         "read/write policy: wait-k (fixed lag k), confidence (write once the model's probability of "
         "what it writes next is at least --tau, between --min-lag and --max-lag), local-agreement "
         "(LocalAgreement-n: after each read decode a tentative continuation and write the words it "
         "shares with the previous --agreement − 1 reads', between --min-lag and --max-lag; greedy, beam 1) "
         "or alignatt "
         "(AlignAtt: write unless the model's attention peaks on the last --frames units read, between "
         "--min-lag and --max-lag) (default: the model's)")
      ->check(CLI::IsMember({"wait-k", "confidence", "local-agreement", "alignatt"}));
  const std::string tau_help =
      "confidence: write when the probability of the next word's first token (with --beam, of the whole "
      "word) is at least this, in [0, 1] (default: the model's)";
  const std::string frames_help =
      "alignatt: read while the attention of the row that chooses the next word peaks on one of the last "
      "this many source units read (words, or audio chunks) (default: the model's)";
  if (sweep) {
    app.add_option("--tau", sweep->taus, tau_help + "; several (repeatable or comma-separated) for a sweep")
        ->delimiter(',')
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--frames", sweep->frames,
                   frames_help + "; several (repeatable or comma-separated) for a sweep")
        ->delimiter(',')
        ->check(CLI::Range(1, stream::kMaxPolicyLag));
  } else {
    app.add_option("--tau", o.tau, tau_help)->check(CLI::Range(0.0, 1.0));
    app.add_option("--frames", o.frames, frames_help)->check(CLI::Range(1, stream::kMaxPolicyLag));
  }
  app.add_option("--layers", o.layers,
                 "alignatt: the layers whose attention heads are summed, counted from 0 (comma-separated; "
                 "default: the model's, or every layer)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("--agreement", o.agreement,
                 "local-agreement: write a word once the continuations of this many successive reads begin "
                 "with it (2: LocalAgreement-2, as whisper_streaming; more waits longer for surer words) "
                 "(default: the model's)")
      ->check(CLI::Range(2, stream::kMaxPolicyAgreement));
  app.add_option("--min-lag", o.min_lag,
                 "confidence, local-agreement, alignatt: below this lag (source units read minus words "
                 "written) always read (default: the model's)")
      ->check(CLI::Range(0, stream::kMaxPolicyLag));
  app.add_option("--max-lag", o.max_lag,
                 "confidence, local-agreement, alignatt: at this lag or above always write "
                 "(local-agreement: the tentative continuation's next word, agreed or not; also its bound "
                 "in words) (default: the model's)")
      ->check(CLI::Range(1, stream::kMaxPolicyLag));
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

namespace {

// The options whose default is the model's, with the ModelMeta field each one shows.
struct ModelDefault {
  const char* option;
  std::string (*value)(const stream::ModelMeta&);
};
const ModelDefault kModelDefaults[] = {
    {"--wait-k", [](const stream::ModelMeta& m) { return std::to_string(m.k); }},
    {"--phi", [](const stream::ModelMeta& m) { return m.phi.to_string(); }},
    {"--paradigm", [](const stream::ModelMeta& m) { return std::string(stream::paradigm_name(m.paradigm)); }},
    {"--template", [](const stream::ModelMeta& m) { return m.prompt_template.name; }},
    {"--src-lang", [](const stream::ModelMeta& m) { return m.source_lang; }},
    {"--tgt-lang", [](const stream::ModelMeta& m) { return m.target_lang; }},
    {"--beam", [](const stream::ModelMeta& m) { return std::to_string(m.beam); }},
    {"--policy", [](const stream::ModelMeta& m) { return std::string(stream::policy_name(m.policy.kind)); }},
    {"--tau", [](const stream::ModelMeta& m) { return format_float(static_cast<float>(m.policy.tau)); }},
    {"--min-lag", [](const stream::ModelMeta& m) { return std::to_string(m.policy.min_lag); }},
    {"--max-lag", [](const stream::ModelMeta& m) { return std::to_string(m.policy.max_lag); }},
    {"--frames", [](const stream::ModelMeta& m) { return std::to_string(m.policy.frames); }},
    {"--agreement", [](const stream::ModelMeta& m) { return std::to_string(m.policy.agreement); }},
    {"--end-after-source",
     [](const stream::ModelMeta& m) { return std::string(m.end_after_source ? "on" : "off"); }},
};

// The value of -m, or "" when the app has no -m or it was not given.
std::string model_path(const CLI::App& app) {
  const CLI::Option* m = app.get_option_no_throw("--model");
  return m && m->count() > 0 && !m->results().empty() ? m->results().front() : "";
}

Result<stream::ModelMeta> read_meta(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found(path + ": no such model file or directory");
  return stream::ModelMeta::load(path);
}

bool same_language(const std::string& a, const std::string& b) {
  return tokenizer::language_name(a) == tokenizer::language_name(b);
}

}  // namespace

Result<std::string> show_model_defaults(CLI::App& app) {
  std::vector<std::pair<CLI::Option*, const ModelDefault*>> present;
  for (const auto& d : kModelDefaults)
    if (CLI::Option* opt = app.get_option_no_throw(d.option)) present.push_back({opt, &d});
  if (present.empty()) return std::string();
  const std::string path = model_path(app);
  stream::ModelMeta meta;
  if (!path.empty()) {
    GPS_ASSIGN(meta, read_meta(path));
  }
  for (auto [opt, d] : present) opt->default_str(d->value(meta));
  if (path.empty())
    return std::string(
        "Defaults that are the model's: those of a model without gpstream.json (any language); "
        "-m MODEL --help shows MODEL's.");
  if (!meta.from_file)
    return "Defaults that are the model's: " + path +
           " has no gpstream.json, so the built-in ones (any language).";
  return "Defaults that are the model's: those of " + path + " (its gpstream.json).";
}

Status check_stream_settings(const CLI::App& app) {
  auto given = [&](const char* name) -> std::vector<std::string> {
    const CLI::Option* opt = app.get_option_no_throw(name);
    return opt && opt->count() > 0 ? opt->results() : std::vector<std::string>{};
  };
  const auto src = given("--src-lang"), tgt = given("--tgt-lang"), tmpl = given("--template"),
             paradigms = given("--paradigm");
  const std::string path = model_path(app);
  if (path.empty() || (src.empty() && tgt.empty() && tmpl.empty() && paradigms.empty())) return {};
  auto meta = read_meta(path);
  if (!meta.ok()) return {};  // the command's own load reports it
  std::string warning;
  if (meta->from_file) {
    const std::string pair = meta->source_lang + " to " + meta->target_lang;
    for (const auto& s : src)
      if (!same_language(s, meta->source_lang))
        return invalid_argument("--src-lang " + s + ": " + path + " takes " + pair +
                                " only (its gpstream.json)");
    for (const auto& t : tgt)
      if (!same_language(t, meta->target_lang))
        return invalid_argument("--tgt-lang " + t + ": " + path + " takes " + pair +
                                " only (its gpstream.json)");
    std::vector<stream::Paradigm> seen;
    for (const auto& p : paradigms) {
      auto parsed = stream::parse_paradigm(p);
      if (!parsed || *parsed == meta->paradigm) continue;  // an unknown name is the command's usage error
      if (std::find(seen.begin(), seen.end(), *parsed) != seen.end()) continue;
      seen.push_back(*parsed);
      warning += (warning.empty() ? "" : ", ") + std::string(stream::paradigm_name(*parsed));
    }
  }
  if (!tmpl.empty()) {
    auto t = tokenizer::Template::builtin(tmpl.front());
    if (!t.ok()) return t.error().with_context("--template");
    auto tok = tokenizer::Tokenizer::load(path);
    if (!tok.ok()) return {};  // the command's own load reports it
    for (const auto& token : t->special_tokens())
      if (!tok->token_to_id(token))
        return invalid_argument("--template " + t->name + ": the tokenizer of " + path + " has no " + token +
                                " token, so the model was not made for this template");
  }
  // A policy with a paradigm it does not run with is a usage error, reported without the warning below.
  stream::PolicySpec policy = meta->policy;
  if (const auto named = given("--policy"); !named.empty())
    if (auto kind = stream::parse_policy_name(named.back())) policy.kind = *kind;
  for (const auto& p : paradigms)
    if (auto parsed = stream::parse_paradigm(p))
      if (Status st = stream::check_policy(policy, *parsed); !st.ok()) return st;
  // Only once every check has passed, so that a usage error stays the one line on stderr.
  if (!warning.empty())
    std::fprintf(stderr, "%s: warning: %s was trained for the %s paradigm, not %s\n", app.get_name().c_str(),
                 path.c_str(), stream::paradigm_name(meta->paradigm), warning.c_str());
  return {};
}

Result<stream::SessionOptions> session_options(const StreamCli& o, const stream::StreamingModel& m, int k,
                                               const std::string& paradigm) {
  return session_options(o, m, SweepPoint{.k = k}, paradigm);
}

Result<stream::SessionOptions> session_options(const StreamCli& o, const stream::StreamingModel& m,
                                               const SweepPoint& point, const std::string& paradigm) {
  stream::SessionSettings s = o;
  s.k = point.k;
  if (point.tau >= 0) s.tau = point.tau;
  if (point.frames > 0) s.frames = point.frames;
  s.paradigm = paradigm;
  return stream::session_options(m, s);
}

}  // namespace gpstream::cli
