// Options of a parsed command line → config.yaml (eval_run_config.h).
#include "cli/eval_run_config.h"

#include <filesystem>
#include <span>

#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

eval::RunOption::Kind kind_of(const CLI::Option& opt) {
  if (opt.get_expected_max() == 0) return eval::RunOption::Kind::Bool;
  const std::string type = opt.get_type_name();
  for (const char* number : {"INT", "UINT", "FLOAT"}) {
    const std::string n = number;
    if (type == n || type.rfind(n + ":", 0) == 0) return eval::RunOption::Kind::Number;
  }
  return eval::RunOption::Kind::String;
}

// CLI11's text of a container default, "[a,b,c]", back into items.
std::vector<std::string> split_default_list(std::string s) {
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::vector<std::string> items;
  if (s.empty()) return items;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1)
    items.push_back(s.substr(start, comma - start));
  items.push_back(s.substr(start));
  return items;
}

}  // namespace

std::vector<eval::RunOption> parsed_options(CLI::App& app) {
  std::vector<eval::RunOption> out;
  for (CLI::Option* opt : app.get_options()) {
    if (opt == app.get_help_ptr() || opt == app.get_help_all_ptr()) continue;
    eval::RunOption r;
    r.name = !opt->get_lnames().empty()   ? opt->get_lnames().front()
             : !opt->get_snames().empty() ? opt->get_snames().front()
                                          : opt->get_name();
    r.kind = kind_of(*opt);
    r.list = r.kind != eval::RunOption::Kind::Bool && opt->get_items_expected_max() > 1;
    const bool given = opt->count() > 0;
    if (r.kind == eval::RunOption::Kind::Bool) {
      // The parse has accepted the value ("--json", "--json=false"), so it converts.
      r.values = {given && opt->as<bool>() ? "true" : "false"};
    } else if (given) {
      r.values = opt->results();
      if (!r.list && r.values.size() > 1) r.values = {r.values.back()};  // the last one counts
    } else {
      // Not given: the bound variable's value, i.e. its default.
      const std::string value = opt->capture_default_str()->get_default_str();
      r.values = r.list ? split_default_list(value) : std::vector<std::string>{value};
    }
    out.push_back(std::move(r));
  }
  return out;
}

Status write_eval_run_config(CLI::App& app, const std::string& dir, const std::string& model,
                             const std::string& source_type) {
  if (dir.empty()) return {};
  std::string command = app.get_name();
  if (command.rfind("gpstream ", 0) == 0) command = command.substr(9);
  GPS_ASSIGN(eval::RunConfig config, eval::describe_run(command, model, source_type, parsed_options(app)));
  const std::string yaml = eval::format_run_config_yaml(config);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  return write_file_atomic(dir + "/config.yaml", std::as_bytes(std::span(yaml)));
}

}  // namespace gpstream::cli
