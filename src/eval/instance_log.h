// SimulEval's instances.log: one JSON object per line, written by Python json.dumps (", " and ": "
// separators, ensure_ascii, ints as ints, floats as repr). Text-output keys in SimulEval's order:
// index, prediction, delays, elapsed, prediction_length, reference, source, source_length
// (metrics.md A.7). gpstream eval writes these records and gpstream score reads them back, as do
// SimulEval's --score-only and any script that reads SimulEval logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

// Latency unit (SimulEval --eval-latency-unit): word or char (spm is not supported).
enum class LatencyUnit { Word, Char };

struct InstanceRecord {
  int64_t index = 0;
  std::string prediction;
  // Delay per target unit (words read for text input, ms for speech or paced text) and the
  // computation-aware timestamp. *_int: the JSON holds ints (text), else floats.
  std::vector<double> delays;
  bool delays_int = true;
  std::vector<double> elapsed;
  bool elapsed_int = true;
  int64_t prediction_length = 0;
  std::optional<std::string> reference;  // null / absent: no reference
  std::string source;                    // SimulEval text: " ".join(source words)
  bool source_is_list = false;           // old speech logs store a list of lines (joined here by "\n")
  double source_length = 0;              // words (text) or ms (speech)
  bool source_length_int = true;
  bool has_delays_key = true;  // false: the line had no "delays" (SimulEval skips such instances)
  // gpstream's own key, after SimulEval's (absent when empty): per target word, the source units read when it
  // was written, the end-of-source marker counting as one unit once read — the delays of the paper's lagging
  // code (eval/latency.h, LatencyDefinition::Paper). Text input only.
  std::vector<double> unit_delays;

  // The record as SimulEval's json.dumps writes it (no trailing newline).
  std::string to_json_line() const;
};

// SimulEval's TextOutputInstance bookkeeping, for evaluators that record predictions as SimulEval
// does (metrics.md A.1): each write's content is split into latency units — word:
// content.strip().split(); char: list(content.replace(" ", "")) — and every unit gets the write's
// delay and elapsed time. Empty content adds nothing.
std::vector<std::string> prediction_units(std::string_view content, LatencyUnit unit);
// The prediction string BLEU sees: word → " ".join(units), char → "".join(units) (no spaces).
std::string join_prediction(const std::vector<std::string>& units, LatencyUnit unit);

struct TextOutputRecorder {
  LatencyUnit unit = LatencyUnit::Word;
  std::vector<std::string> units;
  std::vector<double> delays;
  std::vector<double> elapsed;
  // One agent write (SimulEval receive_prediction).
  void receive(std::string_view content, double delay, double elapsed_ms);
  // The finished record; delays_int/elapsed_int say whether the times are whole numbers to be
  // written as JSON ints (text input: word counts and elapsed 0).
  InstanceRecord finish(int64_t index, std::optional<std::string> reference, std::string source,
                        double source_length, bool delays_int, bool elapsed_int) const;
};

// Python json.dumps of a string (ensure_ascii=True): "\u00e9", surrogate pairs above U+FFFF.
std::string python_json_string(std::string_view s);

// One line of an instances.log; where = "FILE:LINE" for messages.
Result<InstanceRecord> parse_instance_line(std::string_view line, std::string_view where);

struct InstancesLog {
  std::vector<InstanceRecord> records;  // file order; a repeated index replaces the earlier record in place
  std::vector<std::string> warnings;    // e.g. repeated indices
};

// Parses a whole log. Every line must be a JSON object (a blank or invalid line is an error naming it).
Result<InstancesLog> parse_instances_log(std::string_view text, std::string_view name);
Result<InstancesLog> read_instances_log(const std::string& path);
// Writes records atomically (temp file + rename), one JSON line each.
Status write_instances_log(const std::string& path, const std::vector<InstanceRecord>& records);

}  // namespace gpstream::eval
