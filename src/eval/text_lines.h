// Reading hypothesis/reference files as sacreBLEU does: UTF-8, lines split on "\n" only
// (smart_open(newline="\n")), each line rstrip()'d of Python whitespace by the caller's choice.
// Invalid UTF-8 is an error naming the file and line (sacreBLEU raises UnicodeDecodeError).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

// Lines of `text` (a final line without "\n" counts; a trailing "\n" does not start a new line).
// rstrip: apply Python str.rstrip() to each line (sacreBLEU's CLI), else only the "\n" is removed.
Result<std::vector<std::string>> split_text_lines(std::string_view text, std::string_view name, bool rstrip);
// Lines of `text` split on "\n", each without a trailing "\r"; no UTF-8 check (for TSV-like files of ours).
std::vector<std::string> split_crlf_lines(std::string_view text);
// path "-" reads standard input.
Result<std::vector<std::string>> read_text_lines(const std::string& path, bool rstrip);

// Reference streams as sacreBLEU's CLI reads them: one stream per file, or with num_refs > 1 a
// single file whose lines hold num_refs tab-separated references (a different count is an error
// naming the line). Lines are rstrip()'d.
Result<std::vector<std::vector<std::string>>> read_reference_streams(const std::vector<std::string>& paths,
                                                                     int num_refs);
// Checks that every stream has as many lines as the hypotheses and that no segment is left
// without a reference; errors name the file and line.
Status check_hyps_and_refs(const std::vector<std::string>& hyps, std::string_view hyp_name,
                           const std::vector<std::vector<std::string>>& refs,
                           const std::vector<std::string>& ref_names);

// sacreBLEU's JSON score (Score.format(is_json=True) = json.dumps(d, indent=1, ensure_ascii=False)):
// name, score, signature, [verbose_score], then each signature field as a string. score_json is the
// already formatted number (sacreBLEU: float(f"{score:.{width}f}") in repr). extra: further
// "key": raw-JSON pairs appended at the end (gpstream's --json statistics).
std::string format_sacrebleu_json(std::string_view name, const std::string& score_json,
                                  std::string_view signature, std::string_view verbose,
                                  const std::vector<std::pair<std::string, std::string>>& extra = {});
// A JSON string as json.dumps(ensure_ascii=False) writes it.
std::string json_string_utf8(std::string_view s);

}  // namespace gpstream::eval
