// `eval --output DIR` and `eval --speech --output DIR` write DIR/config.yaml (eval/run_config.h): this takes
// every option of the parsed command line from CLI11 — the given value, or the bound variable's default —
// and writes the file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "eval/run_config.h"
#include "util/error.h"

namespace gpstream::cli {

// Every option of `app` after parsing (help flags left out), in declaration order.
std::vector<eval::RunOption> parsed_options(CLI::App& app);

// Writes DIR/config.yaml for the run `app` describes (source_type "text" or "speech"); nothing when `dir` is
// empty.
Status write_eval_run_config(CLI::App& app, const std::string& dir, const std::string& model,
                             const std::string& source_type);

}  // namespace gpstream::cli
