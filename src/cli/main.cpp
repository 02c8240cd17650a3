// gpstream: entry point. Dispatches `gpstream <command> ...` to the registered commands.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli/command.h"

namespace gpstream::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

int fail(const std::string& command, const Error& error) {
  std::fprintf(stderr, "gpstream %s: %s\n", command.c_str(), error.message().c_str());
  return kExitError;
}

}  // namespace gpstream::cli

static void print_usage(FILE* out) {
  auto commands = gpstream::cli::command_registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::fprintf(out, "usage: gpstream <command> [options]   (gpstream <command> --help for its options)\n\ncommands:\n");
  int width = 0;
  for (const auto& c : commands) width = std::max(width, static_cast<int>(c.name.size()));
  for (const auto& c : commands) std::fprintf(out, "  %-*s  %s\n", width, c.name.c_str(), c.summary.c_str());
}

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return gpstream::cli::kExitUsage;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return gpstream::cli::kExitOk;
  }
  for (const auto& c : gpstream::cli::command_registry()) {
    if (c.name == argv[1]) {
      std::string name = "gpstream " + c.name;
      std::vector<char*> args(argv + 1, argv + argc);
      args[0] = name.data();
      try {
        return c.run(static_cast<int>(args.size()), args.data());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gpstream %s: %s\n", c.name.c_str(), e.what());
        return gpstream::cli::kExitError;
      }
    }
  }
  std::fprintf(stderr, "gpstream: unknown command '%s'\n", argv[1]);
  print_usage(stderr);
  return gpstream::cli::kExitUsage;
}
