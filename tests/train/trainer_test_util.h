// Helpers for the trainer tests: small TSV files cut from the real corpus and a tiny byte-level config.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "train/train_config.h"

namespace gpstream::testing {

inline const std::string kCorpus = std::string(GPSTREAM_SOURCE_DIR) + "/data/corpus/en-fr";

// This process's folder for tmp_dir: <build>/train_test_tmp/<pid>, so that two copies of a test binary
// running at once never share one; removed when the process exits.
inline const std::string& process_tmp_root() {
  struct Root {
    std::string path = std::string(GPSTREAM_BINARY_DIR) + "/train_test_tmp/" + std::to_string(::getpid());
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

// An empty folder `name` for one test, in this process's folder.
inline std::string tmp_dir(const std::string& name) {
  const std::string d = process_tmp_root() + "/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// A small TSV of the first n lines of the repository's corpus (data/corpus), else synthetic pairs.
inline std::string corpus_tsv(const std::string& dir, const std::string& split, int n) {
  const std::string path = dir + "/" + split + ".tsv";
  std::ifstream in(kCorpus + "." + split + ".tsv");
  std::ofstream out(path);
  std::string line;
  int k = 0;
  while (k < n && std::getline(in, line)) out << line << "\n", ++k;
  for (; k < n; ++k) out << "the file " << k << " is open\tle fichier " << k << " est ouvert\n";
  return path;
}

inline std::string base_config(const std::string& dir, const std::string& train, const std::string& dev,
                               int steps, const std::string& extra = "") {
  return R"({
    "model": {"tokenizer": "bytes", "scratch": {"hidden_size": 64, "intermediate_size": 192, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "init_std": 0.05}},
    "data": {"train": ")" +
         train + R"(", "dev": ")" + dev + R"(", "mode": "batch", "max_seq": 256, "batch_tokens": 1024},
    "optimizer": {"lr": 0.005, "weight_decay": 0.01, "clip": 1.0},
    "schedule": {"kind": "cosine", "warmup_steps": 10, "min_lr_ratio": 0.1},
    "steps": )" +
         std::to_string(steps) + R"(, "seed": 7, "threads": 1, "output": ")" + dir + R"(" )" + extra + "}";
}

inline train::TrainConfig parse(const std::string& text) {
  auto c = train::parse_train_config(text);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message());
  return *c;
}

}  // namespace gpstream::testing
