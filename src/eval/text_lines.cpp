#include "eval/text_lines.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "eval/unicode_text.h"

namespace gpstream::eval {

std::vector<std::string> split_crlf_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view l = text.substr(i, j - i);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.emplace_back(l);
    i = j + 1;
  }
  return lines;
}

Result<std::vector<std::string>> split_text_lines(std::string_view text, std::string_view name, bool rstrip) {
  std::vector<std::string> lines;
  size_t start = 0;
  size_t line_no = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    if (!is_valid_utf8(line)) {
      return format_error(std::string(name) + ":" + std::to_string(line_no) + ": invalid UTF-8");
    }
    lines.emplace_back(rstrip ? python_rstrip(line) : line);
  }
  return lines;
}

Result<std::vector<std::string>> read_text_lines(const std::string& path, bool rstrip) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return io_error("cannot open " + path);
    ss << in.rdbuf();
    if (in.bad()) return io_error("error reading " + path);
  }
  return split_text_lines(ss.str(), path == "-" ? "<stdin>" : path, rstrip);
}

Result<std::vector<std::vector<std::string>>> read_reference_streams(const std::vector<std::string>& paths,
                                                                     int num_refs) {
  if (paths.empty()) return invalid_argument("no reference file given");
  if (num_refs < 1) return invalid_argument("--num-refs must be >= 1");
  std::vector<std::vector<std::string>> streams;
  if (num_refs == 1) {
    for (const auto& p : paths) {
      GPS_ASSIGN(auto lines, read_text_lines(p, true));
      streams.push_back(std::move(lines));
    }
    return streams;
  }
  if (paths.size() != 1) return invalid_argument("--num-refs takes a single tab-separated reference file");
  GPS_ASSIGN(auto lines, read_text_lines(paths[0], true));
  streams.resize(static_cast<size_t>(num_refs));
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (static_cast<int>(fields.size()) < num_refs - 1) {
      const size_t tab = lines[i].find('\t', start);
      if (tab == std::string::npos) break;
      fields.push_back(lines[i].substr(start, tab - start));
      start = tab + 1;
    }
    fields.push_back(lines[i].substr(start));
    if (static_cast<int>(fields.size()) != num_refs) {
      return format_error(paths[0] + ":" + std::to_string(i + 1) + ": expected " + std::to_string(num_refs) +
                          " tab-separated references, found " + std::to_string(fields.size()));
    }
    for (int k = 0; k < num_refs; ++k)
      streams[static_cast<size_t>(k)].push_back(std::move(fields[static_cast<size_t>(k)]));
  }
  return streams;
}

Status check_hyps_and_refs(const std::vector<std::string>& hyps, std::string_view hyp_name,
                           const std::vector<std::vector<std::string>>& refs,
                           const std::vector<std::string>& ref_names) {
  for (size_t k = 0; k < refs.size(); ++k) {
    const std::string& name = ref_names[std::min(k, ref_names.size() - 1)];
    if (refs[k].size() != hyps.size()) {
      return invalid_argument(std::string(hyp_name) + " has " + std::to_string(hyps.size()) + " lines but " +
                              name + " has " + std::to_string(refs[k].size()) +
                              " (system and reference streams must have the same number of lines)");
    }
  }
  for (size_t i = 0; i < hyps.size(); ++i) {
    bool any = false;
    for (const auto& s : refs) any = any || !s[i].empty();
    if (!any) {
      return invalid_argument(
          ref_names[0] + ":" + std::to_string(i + 1) +
          ": empty reference (sacreBLEU stops with \"Empty or `None` reference sentence found.\")");
    }
  }
  return {};
}

std::string json_string_utf8(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (u < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", u);
          out += b;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string format_sacrebleu_json(std::string_view name, const std::string& score_json,
                                  std::string_view signature, std::string_view verbose,
                                  const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("name", json_string_utf8(name));
  fields.emplace_back("score", score_json);
  fields.emplace_back("signature", json_string_utf8(signature));
  if (!verbose.empty()) fields.emplace_back("verbose_score", json_string_utf8(verbose));
  size_t start = 0;
  while (start <= signature.size() && !signature.empty()) {
    size_t bar = signature.find('|', start);
    if (bar == std::string_view::npos) bar = signature.size();
    const auto item = signature.substr(start, bar - start);
    const size_t colon = item.find(':');
    if (colon != std::string_view::npos) {
      fields.emplace_back(std::string(item.substr(0, colon)), json_string_utf8(item.substr(colon + 1)));
    }
    start = bar + 1;
  }
  for (const auto& e : extra) fields.push_back(e);
  std::string out = "{\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    out += ' ';
    out += json_string_utf8(fields[i].first);
    out += ": ";
    out += fields[i].second;
    if (i + 1 < fields.size()) out += ',';
    out += '\n';
  }
  out += '}';
  return out;
}

}  // namespace gpstream::eval
