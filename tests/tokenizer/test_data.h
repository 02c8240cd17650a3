// Shared helpers of the tokenizer tests: paths of the fixtures and a per-process cache of loaded
// tokenizers (the big tokenizer.json files take a moment to parse).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace gpstream::tokenizer::testing {

inline std::string data_dir() {
  return std::string(GPSTREAM_SOURCE_DIR) + "/tests/tokenizer/data";
}
// The parallel corpora, in the repository.
inline std::string corpus_dir() {
  return std::string(GPSTREAM_SOURCE_DIR) + "/data/corpus";
}
// The four published tokenizer.json files the parity tests compare against are not in the repository:
// GPSTREAM_TOKENIZER_FIXTURES names their folder, else ../shared/fixtures/tokenizers beside the source tree.
inline std::string fixtures_dir() {
  const char* env = std::getenv("GPSTREAM_TOKENIZER_FIXTURES");
  return env && *env ? std::string(env) : std::string(GPSTREAM_SOURCE_DIR) + "/../shared/fixtures/tokenizers";
}
inline std::string fixture_tokenizer(const std::string& name) {
  return fixtures_dir() + "/" + name;
}
inline bool have_fixture(const std::string& name) {
  return std::ifstream(fixture_tokenizer(name) + "/tokenizer.json").good();
}
// At the top of a test that reads fixture `name`: skips it, naming what is missing, when it is absent.
#define GPS_SKIP_WITHOUT_FIXTURE(name)                           \
  if (!::gpstream::tokenizer::testing::have_fixture(name))       \
  GTEST_SKIP()                                                   \
      << "fixture tokenizer " << (name) << " not found at "      \
      << ::gpstream::tokenizer::testing::fixture_tokenizer(name) \
      << "/tokenizer.json (set GPSTREAM_TOKENIZER_FIXTURES; docs/tokenizer.md, \"Tests and fixtures\")"

inline const Tokenizer& load_fixture(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[name];
  if (!slot) {
    auto t = Tokenizer::load(fixture_tokenizer(name));
    if (!t.ok()) {
      ADD_FAILURE() << "loading " << name << ": " << t.error().message();
      std::abort();
    }
    slot = std::make_unique<Tokenizer>(std::move(t).value());
  }
  return *slot;
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

inline std::vector<int32_t> parse_ids(const std::string& line) {
  std::vector<int32_t> ids;
  std::istringstream ss(line);
  for (int64_t v; ss >> v;) ids.push_back(static_cast<int32_t>(v));
  return ids;
}

// The dev lines of scripts/tokenizer_fixture_inputs.py: en-fr, en-de, en-es dev.tsv, each line's
// English then target side, repeats kept once at their first position.
inline std::vector<std::string> dev_lines() {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const char* pair : {"en-fr", "en-de", "en-es"}) {
    for (const auto& line : split_lines(read_text(corpus_dir() + "/" + pair + ".dev.tsv"))) {
      if (line.empty()) continue;
      size_t start = 0;
      while (true) {
        size_t tab = line.find('\t', start);
        std::string side = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
        if (seen.insert(side).second) out.push_back(side);
        if (tab == std::string::npos) break;
        start = tab + 1;
      }
    }
  }
  return out;
}

inline std::string show_ids(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

}  // namespace gpstream::tokenizer::testing
