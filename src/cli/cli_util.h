// Small helpers shared by the command files: parsing id/position lists and loading models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpstream::cli {

// "1,2,3" → {1,2,3}; errors name the bad item.
Result<std::vector<int32_t>> parse_int_list(const std::string& s, const std::string& what);
Result<std::vector<float>> parse_float_list(const std::string& s, const std::string& what);

// Prints a float the shortest way that reads back exactly.
std::string format_float(float x);

// Seconds as h:mm:ss ("?" when not finite or negative), for progress lines.
std::string format_hms(double seconds);
// v with `decimals` digits after the point ("%.*f").
std::string format_fixed(double v, int decimals);
// On stderr: "\r<label> [#####.....] done/total  Ns elapsed, ETA Ns" (a newline once done == total);
// started_s is steady_seconds() at the start.
void progress_bar(const std::string& label, size_t done, size_t total, double started_s);

}  // namespace gpstream::cli

#include <CLI/CLI.hpp>

#include "stream/session_settings.h"
#include "stream/streaming_model.h"

namespace gpstream::cli {

// Options every streaming command shares (translate, eval, serve).
// The settings over the model's own (stream/session_settings.h), plus which model and how to load it.
struct StreamCli : stream::SessionSettings {
  std::string model;
  std::string template_name;  // "" = model default
  std::string src_lang, tgt_lang;
  int threads = 0;
};

void add_stream_options(CLI::App& app, StreamCli& o, bool with_paradigm = true);
// --end-after-source on|off (part of add_stream_options; for commands that declare their own options).
void add_end_after_source_option(CLI::App& app, StreamCli& o);
// --beam N (part of add_stream_options; for commands that declare their own options).
void add_beam_option(CLI::App& app, StreamCli& o);
// The values an evaluation sweeps besides -k: the confidence policy's --tau and alignatt's --frames.
struct PolicySweep {
  std::vector<double> taus;
  std::vector<int> frames;
};
// --policy NAME, --tau, --min-lag, --max-lag, --frames, --layers. With `sweep`, --tau and --frames take
// several values (repeatable, or a comma list: eval's sweeps) into it; otherwise one each, into o.
void add_policy_options(CLI::App& app, StreamCli& o, PolicySweep* sweep = nullptr);
// Loads the model named by -m.
Result<stream::StreamingModel> load_stream_model(const StreamCli& o);
// --help: the shown defaults of the model-dependent options the app has (-k, --phi, --paradigm, --template,
// --src-lang, --tgt-lang, --beam, --end-after-source) become those of the model named by -m (its
// gpstream.json), or without -m those of a model without gpstream.json; returns a note for the end of the
// help saying which ("" for an app with none of these options). Errors: -m names nothing readable.
Result<std::string> show_model_defaults(CLI::App& app);
// After parsing, against the model named by -m: --src-lang / --tgt-lang must be its languages (a code or its
// English name; a model without gpstream.json takes any language), and the special tokens ("<...>") of the
// --template given must be tokens of its tokenizer; errors are usage errors. A --paradigm other than the one
// the model was trained for gets a one-line warning on stderr. A model that cannot be read is left to the
// command.
Status check_stream_settings(const CLI::App& app);
// Session options (session_options below): the model's defaults, then the command line, then the sweep
// point. Errors (usage): -k with a policy other than wait-k, a setting of another policy (--tau, --frames,
// --layers, or the lags with wait-k); an adaptive policy with a paradigm it does not run with
// (stream::check_policy).
// One setting of an evaluation sweep: wait-k's k, the confidence policy's tau or alignatt's frames; 0 (tau
// -1) where the setting is not swept (then the command line's or the model's).
struct SweepPoint {
  int k = 0;
  double tau = -1;
  int frames = 0;
};
// The settings an evaluation sweeps, one run each: wait-k's k values (-k, default the model's); or, when
// the policy (--policy, default the model's) is confidence, its --tau values; under alignatt its --frames
// values; under local-agreement one run. A sweep of a setting the policy does not have is a usage error.
Result<std::vector<SweepPoint>> eval_settings(const StreamCli& o, const stream::ModelMeta& meta,
                                              const std::vector<int>& ks, const PolicySweep& sweep);
// The name of one evaluation setting, its output folder: "<paradigm>" + stream::policy_folder_suffix
// ("<paradigm>-k<k>", "<paradigm>-confidence-tau<T>", …), or "offline".
std::string setting_label(const stream::SessionOptions& so);
// The policy and its settings as JSON object members, as every eval record writes them: "k": K for wait-k,
// else "policy": NAME and its settings ("tau" for confidence, "frames" and "layers" for alignatt, the lags).
std::string policy_json_members(const stream::PolicySpec& spec, int k);
Result<stream::SessionOptions> session_options(const StreamCli& o, const stream::StreamingModel& m,
                                               const SweepPoint& point, const std::string& paradigm);
// As above with only wait-k's k given (k < 1: the command line's or the model's).
Result<stream::SessionOptions> session_options(const StreamCli& o, const stream::StreamingModel& m, int k,
                                               const std::string& paradigm);

}  // namespace gpstream::cli
