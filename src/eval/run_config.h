// config.yaml of an `eval --output` folder: what produced its scores. SimulEval's own keys (source_type,
// target_type) at the top level, then a `gpstream:` map with the gpstream version, the model path, the
// SHA-256 of each file that defines the model, every option of the command as parsed (defaults included),
// the CPU's model name and the kernels' instruction set (docs/evaluation.md). This module formats the YAML
// and gathers the facts; collecting options from a command line is the CLI's (cli/eval_run_config.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

// One command-line option's value as parsed. Scalars: `values` holds one item; lists: any number.
struct RunOption {
  enum class Kind { String, Number, Bool };
  std::string name;  // the long name without dashes ("wait-k")
  Kind kind = Kind::String;
  bool list = false;
  std::vector<std::string> values;  // Bool: "true"/"false"; Number: the number's text
};

struct RunConfig {
  std::string source_type = "text", target_type = "text";   // SimulEval's: "text" or "speech"
  std::string command;                                      // "eval", "eval --speech"
  std::string version;                                      // gpstream's
  std::string model;                                        // the model path, absolute
  std::vector<std::pair<std::string, std::string>> sha256;  // (file name in the model folder, hex digest)
  std::vector<RunOption> options;
  std::string cpu;          // /proc/cpuinfo's first "model name"
  std::string kernels_isa;  // "avx2" or "avx512" (kernels/cpu_isa.h)
};

// The files whose bytes define a model: for a .gguf file the file itself; for a folder every *.safetensors
// (sorted by name), then config.json, tokenizer.json and gpstream.json where present. With their SHA-256.
Result<std::vector<std::pair<std::string, std::string>>> model_file_hashes(const std::string& model_path);

// The first "model name" line of /proc/cpuinfo, or "unknown".
std::string cpu_model_name();

// A RunConfig with version, model (made absolute), hashes, CPU and instruction set filled in.
Result<RunConfig> describe_run(const std::string& command, const std::string& model_path,
                               const std::string& source_type, std::vector<RunOption> options);

// `s` as a YAML double-quoted scalar: `"` and `\` escaped, control characters and bytes that are not UTF-8
// as escapes (a stray byte 0xNN reads back as U+00NN), everything else verbatim.
std::string yaml_quoted(std::string_view s);

// The config.yaml text (YAML 1.2; strings always double-quoted, numbers and booleans plain).
std::string format_run_config_yaml(const RunConfig& config);

}  // namespace gpstream::eval
