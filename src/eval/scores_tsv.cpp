// scores.tsv reader.
#include "eval/scores_tsv.h"

#include <charconv>
#include <cmath>

#include "eval/text_lines.h"
#include "util/mapped_file.h"

namespace gpstream::eval {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  for (;;) {
    size_t j = line.find('\t', i);
    out.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<std::pair<std::string, double>>> read_scores_tsv(const std::string& path) {
  GPS_ASSIGN(std::string text, read_text_file(path));
  std::vector<std::string> lines;
  for (std::string& l : split_crlf_lines(text))
    if (!l.empty()) lines.push_back(std::move(l));
  if (lines.size() != 2) return format_error(path + ": expected a header line and one row of values");
  auto names = split_tabs(lines[0]), values = split_tabs(lines[1]);
  if (names.size() != values.size())
    return format_error(path + ": " + std::to_string(names.size()) + " names but " +
                        std::to_string(values.size()) + " values");
  std::vector<std::pair<std::string, double>> out;
  for (size_t k = 0; k < names.size(); ++k) {
    double v = 0;
    const std::string& s = values[k];
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
      return format_error(path + ": value '" + s + "' of " + names[k] + " is not a number");
    out.push_back({names[k], v});
  }
  return out;
}

}  // namespace gpstream::eval
