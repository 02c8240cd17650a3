#include "eval/instance_log.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "eval/python_format.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {

namespace {

void append_number_list(std::string& out, const std::vector<double>& xs, bool as_int) {
  out += '[';
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ", ";
    out += python_repr(PyNumber{xs[i], as_int});
  }
  out += ']';
}

void append_hex4(std::string& out, unsigned v) {
  char b[8];
  std::snprintf(b, sizeof b, "\\u%04x", v & 0xFFFF);
  out += b;
}

// Reads a JSON number list; *all_int tells whether every element was an integer literal.
Status read_number_list(const nlohmann::json& j, std::string_view key, std::string_view where,
                        std::vector<double>* out, bool* all_int) {
  if (!j.is_array())
    return format_error(std::string(where) + ": \"" + std::string(key) + "\" must be a list of numbers");
  out->clear();
  *all_int = true;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    if (!v.is_number()) {
      return format_error(std::string(where) + ": \"" + std::string(key) + "\"[" + std::to_string(i) +
                          "] is not a number");
    }
    if (v.is_number_float()) *all_int = false;
    const double d = v.get<double>();
    if (!std::isfinite(d)) {
      return format_error(std::string(where) + ": \"" + std::string(key) + "\"[" + std::to_string(i) +
                          "] is not finite");
    }
    out->push_back(d);
  }
  return {};
}

}  // namespace

std::vector<std::string> prediction_units(std::string_view content, LatencyUnit unit) {
  std::vector<std::string> out;
  if (unit == LatencyUnit::Word) {
    for (auto w : python_split(content)) out.emplace_back(w);
    return out;
  }
  for (const auto& c : decode_utf8(content)) {
    if (c.cp == ' ') continue;
    out.emplace_back(content.substr(c.offset, c.length));
  }
  return out;
}

std::string join_prediction(const std::vector<std::string>& units, LatencyUnit unit) {
  std::string out;
  for (size_t i = 0; i < units.size(); ++i) {
    if (i && unit == LatencyUnit::Word) out += ' ';
    out += units[i];
  }
  return out;
}

void TextOutputRecorder::receive(std::string_view content, double delay, double elapsed_ms) {
  for (auto& u : prediction_units(content, unit)) {
    units.push_back(std::move(u));
    delays.push_back(delay);
    elapsed.push_back(elapsed_ms);
  }
}

InstanceRecord TextOutputRecorder::finish(int64_t index, std::optional<std::string> reference,
                                          std::string source, double source_length, bool delays_int,
                                          bool elapsed_int) const {
  InstanceRecord r;
  r.index = index;
  r.prediction = join_prediction(units, unit);
  r.delays = delays;
  r.delays_int = delays_int;
  r.elapsed = elapsed;
  r.elapsed_int = elapsed_int;
  r.prediction_length = static_cast<int64_t>(units.size());
  r.reference = std::move(reference);
  r.source = std::move(source);
  r.source_length = source_length;
  r.source_length_int = delays_int;
  return r;
}

std::string python_json_string(std::string_view s) {
  std::string out = "\"";
  for (const auto& c : decode_utf8(s)) {
    const char32_t cp = c.cp;
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      append_hex4(out, static_cast<unsigned>(cp));
    } else {
      const char32_t v = cp - 0x10000;
      append_hex4(out, static_cast<unsigned>(0xD800 + (v >> 10)));
      append_hex4(out, static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    }
  }
  out += '"';
  return out;
}

std::string InstanceRecord::to_json_line() const {
  std::string out = "{\"index\": " + std::to_string(index);
  out += ", \"prediction\": " + python_json_string(prediction);
  out += ", \"delays\": ";
  append_number_list(out, delays, delays_int);
  out += ", \"elapsed\": ";
  append_number_list(out, elapsed, elapsed_int);
  out += ", \"prediction_length\": " + std::to_string(prediction_length);
  out += ", \"reference\": " + (reference ? python_json_string(*reference) : std::string("null"));
  out += ", \"source\": ";
  if (source_is_list) {
    out += '[';
    size_t start = 0;
    bool first = true;
    while (true) {
      const size_t nl = source.find('\n', start);
      if (!first) out += ", ";
      first = false;
      out += python_json_string(
          std::string_view(source).substr(start, nl == std::string::npos ? nl : nl - start));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    out += ']';
  } else {
    out += python_json_string(source);
  }
  out += ", \"source_length\": " + python_repr(PyNumber{source_length, source_length_int});
  if (!unit_delays.empty()) {
    out += ", \"unit_delays\": ";
    append_number_list(out, unit_delays, true);
  }
  out += '}';
  return out;
}

Result<InstanceRecord> parse_instance_line(std::string_view line, std::string_view where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers out of range (1e400)
    return format_error(std::string(where) + ": invalid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) return format_error(std::string(where) + ": expected a JSON object");
  InstanceRecord r;
  auto it = j.find("index");
  if (it == j.end() || !it->is_number_integer()) {
    return format_error(std::string(where) + ": missing or non-integer \"index\"");
  }
  r.index = it->get<int64_t>();
  it = j.find("prediction");
  if (it == j.end() || !it->is_string()) {
    return format_error(std::string(where) + ": missing or non-string \"prediction\"");
  }
  r.prediction = it->get<std::string>();
  it = j.find("delays");
  if (it == j.end() || it->is_null()) {
    r.has_delays_key = false;
  } else {
    GPS_TRY(read_number_list(*it, "delays", where, &r.delays, &r.delays_int));
  }
  it = j.find("elapsed");
  if (it != j.end() && !it->is_null())
    GPS_TRY(read_number_list(*it, "elapsed", where, &r.elapsed, &r.elapsed_int));
  it = j.find("unit_delays");
  if (it != j.end() && !it->is_null()) {
    bool whole = true;
    GPS_TRY(read_number_list(*it, "unit_delays", where, &r.unit_delays, &whole));
    if (!whole) return format_error(std::string(where) + ": \"unit_delays\" must be whole numbers");
  }
  it = j.find("prediction_length");
  if (it != j.end() && it->is_number_integer()) r.prediction_length = it->get<int64_t>();
  it = j.find("reference");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_string())
      return format_error(std::string(where) + ": \"reference\" must be a string or null");
    r.reference = it->get<std::string>();
  }
  it = j.find("source");
  if (it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r.source = it->get<std::string>();
    } else if (it->is_array()) {
      r.source_is_list = true;
      for (size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string())
          return format_error(std::string(where) + ": \"source\" list must hold strings");
        if (i) r.source += '\n';
        r.source += (*it)[i].get<std::string>();
      }
    } else {
      return format_error(std::string(where) + ": \"source\" must be a string or a list of strings");
    }
  }
  it = j.find("source_length");
  if (it != j.end() && it->is_number()) {
    r.source_length = it->get<double>();
    r.source_length_int = it->is_number_integer();
    if (!std::isfinite(r.source_length))
      return format_error(std::string(where) + ": \"source_length\" is not finite");
  } else if (!r.delays.empty()) {
    return format_error(std::string(where) + ": missing or non-numeric \"source_length\"");
  }
  return r;
}

Result<InstancesLog> parse_instances_log(std::string_view text, std::string_view name) {
  InstancesLog log;
  std::unordered_map<int64_t, size_t> position;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    const std::string where = std::string(name) + ":" + std::to_string(line_no);
    if (python_strip(line).empty()) return format_error(where + ": empty line (expected a JSON object)");
    GPS_ASSIGN(auto rec, parse_instance_line(line, where));
    auto [pos, inserted] = position.try_emplace(rec.index, log.records.size());
    if (inserted) {
      log.records.push_back(std::move(rec));
    } else {
      log.warnings.push_back(
          where + ": index " + std::to_string(rec.index) +
          " repeats an earlier line; the later record replaces it (as SimulEval's dict does)");
      log.records[pos->second] = std::move(rec);
    }
  }
  return log;
}

Result<InstancesLog> read_instances_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error("error reading " + path);
  return parse_instances_log(ss.str(), path);
}

Status write_instances_log(const std::string& path, const std::vector<InstanceRecord>& records) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error("cannot write " + tmp);
    for (const auto& r : records) out << r.to_json_line() << '\n';
    out.flush();
    if (!out) return io_error("error writing " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return io_error("cannot rename " + tmp + " to " + path);
  return {};
}

}  // namespace gpstream::eval
