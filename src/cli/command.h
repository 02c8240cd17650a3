// Subcommand registry for the `gpstream` binary: each src/cli/<name>.cpp registers itself with
// GPSTREAM_COMMAND (name, summary, an example command line, the function), so adding a command touches no
// shared file. parse_args gives every command the same conventions: --help with the built-in defaults and the
// example, and the streaming settings checked against the model. Exit codes (DESIGN.md): 0 success,
// 2 bad usage, 1 any other error, with one clear line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::cli {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct Command {
  std::string name;
  std::string summary;
  // One example command line ("gpstream translate -m ..."); a command with a second mode (eval --speech)
  // gives one per line, and --help shows the first line that starts with its own usage name.
  std::string example;
  // Receives argv with argv[0] = "gpstream <name>".
  std::function<int(int argc, char** argv)> run;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string summary, std::string example,
                   std::function<int(int, char**)> run) {
    command_registry().push_back({std::move(name), std::move(summary), std::move(example), std::move(run)});
  }
};

// Parses argv with a CLI11 app; returns std::nullopt to continue, or the exit code to return now
// (0 after --help, 2 on a usage error, with one line on stderr).
// --help shows each value option's built-in default (captured from its variable; an option whose text already
// says "default" keeps its words), the model-dependent defaults (-k, --phi, --paradigm, --template,
// languages,
// --beam, --end-after-source) of the model named by -m, else those of a model without gpstream.json, and ends
// with the command's example. After a successful parse the streaming settings are checked against the model
// named by -m (check_stream_settings, cli_util.h): a usage error exits 2.
std::optional<int> parse_args(CLI::App& app, int argc, char** argv);

// Prints "gpstream <command>: <message>" on stderr and returns kExitError.
int fail(const std::string& command, const Error& error);

}  // namespace gpstream::cli

#define GPSTREAM_COMMAND(name, summary, example, fn) \
  static ::gpstream::cli::CommandRegistrar GPS_CONCAT(gps_command_, __COUNTER__)(name, summary, example, fn)
