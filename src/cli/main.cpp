// gpstream: entry point. Dispatches `gpstream <command> ...` to the registered commands; `gpstream help CMD`
// and `gpstream CMD --help` print CMD's options, `--version` / `-V` what `gpstream version` prints, and a
// mistyped command gets the nearest registered name as a suggestion (exit 2). parse_args, the one parser
// every command calls, is here too.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "kernels/blas_kernels.h"

namespace gpstream::cli {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The registered example for an app named "gpstream <command>[ <mode>]": the first example line that
// runs that name ("gpstream eval --speech" picks the line with --speech; "gpstream eval" the first).
std::string example_for(const std::string& app_name) {
  for (const auto& c : command_registry()) {
    const std::string usage = "gpstream " + c.name;
    if (app_name != usage && !starts_with(app_name, usage + " ")) continue;
    size_t i = 0;
    while (i < c.example.size()) {
      size_t j = c.example.find('\n', i);
      if (j == std::string::npos) j = c.example.size();
      const std::string line = c.example.substr(i, j - i);
      if ((line + " ").find(app_name + " ") != std::string::npos) return line;
      i = j + 1;
    }
  }
  return "";
}

// True when every check of the option accepts `value`.
bool passes_checks(CLI::Option& opt, std::string value) {
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = opt.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return true;
    }
    if (!(*v)(value).empty()) return false;
  }
}

// Built-in defaults on every value option that has one and does not name its default in words. A value its
// own checks reject (a "not given" sentinel such as -1 or 0 below the range) is not shown: the option's text
// says what happens instead.
void capture_defaults(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() == 0 || opt->get_expected_min() < 1 || !opt->get_default_str().empty()) continue;
    if (opt->get_description().find("default") != std::string::npos) continue;
    opt->capture_default_str();
    const std::string d = opt->get_default_str();
    if (d == "[]" || d == "{}" || !passes_checks(*opt, d)) opt->default_str("");
  }
}

std::optional<int> print_help(CLI::App& app, CLI::AppFormatMode mode) {
  auto note = show_model_defaults(app);
  if (!note.ok()) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), note.error().message().c_str());
    return kExitError;
  }
  std::string footer = *note;
  if (const std::string example = example_for(app.get_name()); !example.empty())
    footer += (footer.empty() ? "" : "\n") + std::string("Example:\n  ") + example;
  app.footer(footer);
  std::fputs(app.help("", mode).c_str(), stdout);
  return kExitOk;
}

}  // namespace

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
  capture_defaults(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return print_help(app, CLI::AppFormatMode::Normal);
  } catch (const CLI::CallForAllHelp&) {
    return print_help(app, CLI::AppFormatMode::All);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  }
  if (Status s = check_stream_settings(app); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), s.error().message().c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

int fail(const std::string& command, const Error& error) {
  std::fprintf(stderr, "gpstream %s: %s\n", command.c_str(), error.message().c_str());
  return kExitError;
}

}  // namespace gpstream::cli

namespace {

using gpstream::cli::Command;
using gpstream::cli::command_registry;

void print_usage(FILE* out) {
  auto commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::fprintf(
      out,
      "usage: gpstream <command> [options]   (gpstream <command> --help or gpstream help <command> for its "
      "options)\n       gpstream --version\n\ncommands:\n");
  int width = 0;
  for (const auto& c : commands) width = std::max(width, static_cast<int>(c.name.size()));
  for (const auto& c : commands) std::fprintf(out, "  %-*s  %s\n", width, c.name.c_str(), c.summary.c_str());
}

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

const Command* find_command(const std::string& name) {
  for (const auto& c : command_registry())
    if (c.name == name) return &c;
  return nullptr;
}

// "gpstream: unknown command 'x'" with the nearest registered name when it is at most a third of the typed
// name's length away (at least one edit), on one line; exit 2.
int unknown_command(const std::string& name) {
  const Command* best = nullptr;
  size_t best_distance = std::max<size_t>(1, name.size() / 3) + 1;
  for (const auto& c : command_registry()) {
    const size_t d = edit_distance(name, c.name);
    if (d < best_distance || (d == best_distance && best && c.name < best->name))
      best = &c, best_distance = d;
  }
  if (best)
    std::fprintf(stderr, "gpstream: unknown command '%s'; did you mean '%s'?\n", name.c_str(),
                 best->name.c_str());
  else
    std::fprintf(stderr, "gpstream: unknown command '%s' (gpstream --help lists the commands)\n",
                 name.c_str());
  return gpstream::cli::kExitUsage;
}

int run_command(const Command& c, std::vector<std::string> args) {
  args.insert(args.begin(), "gpstream " + c.name);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    return c.run(static_cast<int>(argv.size()), argv.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpstream %s: %s\n", c.name.c_str(), e.what());
    return gpstream::cli::kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  if (argc < 2) {
    print_usage(stderr);
    return gpstream::cli::kExitUsage;
  }
  const std::string first = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (first == "--help" || first == "-h" || (first == "help" && rest.empty())) {
    print_usage(stdout);
    return gpstream::cli::kExitOk;
  }
  if (first == "--version" || first == "-V") {
    const Command* version = find_command("version");
    return version ? run_command(*version, rest) : gpstream::cli::kExitError;
  }
  if (first == "help") {  // gpstream help CMD [options]: CMD's --help (with -m MODEL: the model's defaults)
    const Command* c = find_command(rest[0]);
    if (!c) return unknown_command(rest[0]);
    rest.erase(rest.begin());
    rest.push_back("--help");
    return run_command(*c, rest);
  }
  if (const Command* c = find_command(first)) return run_command(*c, rest);
  return unknown_command(first);
}
