// config.yaml of an `eval --output` folder (run_config.h).
#include "eval/run_config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "kernels/cpu_isa.h"
#include "util/sha256.h"
#include "util/version.h"

namespace gpstream::eval {
namespace {

// The length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table 3-7) and its code point; 0 when
// the bytes there are not one.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char t = b(k);
    if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF)) return 0;
    cp = cp << 6 | (t & 0x3F);
  }
  return n;
}

void append_hex_escape(std::string& out, char kind, uint32_t cp, int digits) {
  static const char kDigits[] = "0123456789ABCDEF";
  out += '\\';
  out += kind;
  for (int d = digits - 1; d >= 0; --d) out += kDigits[(cp >> (4 * d)) & 15];
}

bool is_yaml_number(const std::string& s) {
  static const std::regex number(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  return std::regex_match(s, number);
}

bool is_plain_key(const std::string& s) {
  static const std::regex key(R"([A-Za-z][A-Za-z0-9_-]*)");
  return std::regex_match(s, key);
}

std::string yaml_key(const std::string& s) {
  return is_plain_key(s) ? s : yaml_quoted(s);
}

std::string yaml_value(const RunOption& o, const std::string& v) {
  if (o.kind == RunOption::Kind::Bool && (v == "true" || v == "false")) return v;
  if (o.kind == RunOption::Kind::Number && is_yaml_number(v)) return v;
  return yaml_quoted(v);
}

}  // namespace

std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c < 0x20 || c == 0x7F) {
        append_hex_escape(out, 'x', c, 2);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {  // not UTF-8: the byte as U+00NN
      append_hex_escape(out, 'x', c, 2);
      ++i;
      continue;
    }
    // Outside YAML's printable set (C1 controls, the BOM, U+FFFE/U+FFFF) or line breaks to a YAML 1.1
    // reader (U+0085, U+2028, U+2029): escaped.
    if (cp <= 0x9F || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF || cp == 0x2028 || cp == 0x2029)
      append_hex_escape(out, cp <= 0xFF ? 'x' : 'u', cp, cp <= 0xFF ? 2 : 4);
    else
      out.append(s.substr(i, n));
    i += n;
  }
  out += '"';
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> model_file_hashes(const std::string& model_path) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  std::vector<std::string> names;
  fs::path dir = model_path;
  if (fs::is_regular_file(model_path, ec)) {
    dir = fs::path(model_path).parent_path();
    names.push_back(fs::path(model_path).filename().string());
  } else {
    for (fs::directory_iterator it(model_path, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".safetensors") names.push_back(it->path().filename().string());
    if (ec) return io_error("cannot list " + model_path + ": " + ec.message());
    std::sort(names.begin(), names.end());
    for (const char* extra : {"config.json", "tokenizer.json", "gpstream.json"})
      if (fs::exists(fs::path(model_path) / extra, ec)) names.push_back(extra);
  }
  for (const std::string& name : names) {
    GPS_ASSIGN(std::string hex, sha256_file_hex((dir / name).string()));
    out.emplace_back(name, std::move(hex));
  }
  return out;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

Result<RunConfig> describe_run(const std::string& command, const std::string& model_path,
                               const std::string& source_type, std::vector<RunOption> options) {
  RunConfig c;
  c.source_type = source_type;
  c.command = command;
  c.version = gpstream::version();
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(model_path, ec);
  c.model = ec ? model_path : abs.lexically_normal().string();
  GPS_ASSIGN(c.sha256, model_file_hashes(model_path));
  c.options = std::move(options);
  c.cpu = cpu_model_name();
  c.kernels_isa = std::string(kernels::isa_name(kernels::kernel_isa()));
  return c;
}

std::string format_run_config_yaml(const RunConfig& c) {
  std::string y;
  y += "source_type: " + c.source_type + "\n";
  y += "target_type: " + c.target_type + "\n";
  y += "gpstream:\n";
  y += "  version: " + yaml_quoted(c.version) + "\n";
  y += "  command: " + yaml_quoted(c.command) + "\n";
  y += "  model: " + yaml_quoted(c.model) + "\n";
  y += "  sha256:" + std::string(c.sha256.empty() ? " {}" : "") + "\n";
  for (const auto& [name, hex] : c.sha256) y += "    " + yaml_quoted(name) + ": " + yaml_quoted(hex) + "\n";
  y += "  options:" + std::string(c.options.empty() ? " {}" : "") + "\n";
  for (const RunOption& o : c.options) {
    y += "    " + yaml_key(o.name) + ":";
    if (!o.list) {
      y += " " + (o.values.empty() ? std::string("null") : yaml_value(o, o.values.front())) + "\n";
    } else if (o.values.empty()) {
      y += " []\n";
    } else {
      y += "\n";
      for (const std::string& v : o.values) y += "      - " + yaml_value(o, v) + "\n";
    }
  }
  y += "  cpu: " + yaml_quoted(c.cpu) + "\n";
  y += "  kernels_isa: " + yaml_quoted(c.kernels_isa) + "\n";
  return y;
}

}  // namespace gpstream::eval
