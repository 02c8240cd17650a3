// Subcommand registry for the `gpstream` binary: each src/cli/<name>.cpp registers itself with
// GPSTREAM_COMMAND, so adding a command touches no shared file. Exit codes (DESIGN.md): 0 success,
// 2 bad usage, 1 any other error, with one clear line on stderr.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "util/error.h"

namespace gpstream::cli {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct Command {
  std::string name;
  std::string summary;
  // Receives argv with argv[0] = "gpstream <name>".
  std::function<int(int argc, char** argv)> run;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string summary, std::function<int(int, char**)> run) {
    command_registry().push_back({std::move(name), std::move(summary), std::move(run)});
  }
};

// Parses argv with a CLI11 app; returns std::nullopt to continue, or the exit code to return now
// (0 after --help, 2 on a usage error, with one line on stderr).
std::optional<int> parse_args(CLI::App& app, int argc, char** argv);

// Prints "gpstream <command>: <message>" on stderr and returns kExitError.
int fail(const std::string& command, const Error& error);

}  // namespace gpstream::cli

#define GPSTREAM_COMMAND(name, summary, fn) \
  static ::gpstream::cli::CommandRegistrar GPS_CONCAT(gps_command_, __LINE__)(name, summary, fn)
