// `gpstream logits` writes JSON: a tiny random model whose output projection is edited here so that one
// logit is NaN and one ±inf must still print a document a JSON parser accepts, with those two logits as
// null and every other one a number. Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace gpstream {
namespace {

using nlohmann::json;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/logits_cli_test_tmp/" + std::to_string(getpid());

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sets lm_head rows 0 and 1 of DIR/model.safetensors (F32) to all NaN and to (+inf, 0, …, 0): logit 0
// is NaN and logit 1 is ±inf (NaN should the hidden state's first value be 0). Parsed here from the
// file's bytes, not through the reader under test.
void poison_output_rows(const std::string& dir) {
  const std::string path = dir + "/model.safetensors";
  std::string bytes = read_all(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  const json header = json::parse(bytes.substr(8, header_len));
  ASSERT_TRUE(header.contains("lm_head.weight")) << header.dump();
  const json& t = header["lm_head.weight"];
  ASSERT_EQ(t["dtype"], "F32");
  const auto n_embd = t["shape"][1].get<size_t>();
  const size_t begin = 8 + header_len + t["data_offsets"][0].get<size_t>();
  ASSERT_LE(begin + 2 * n_embd * sizeof(float), bytes.size());
  for (size_t j = 0; j < 2 * n_embd; ++j) {
    float v = 0.0f;
    if (j < n_embd) v = std::numeric_limits<float>::quiet_NaN();
    if (j == n_embd) v = std::numeric_limits<float>::infinity();
    std::memcpy(bytes.data() + begin + j * sizeof(float), &v, sizeof v);
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Every logit of one row: the first two null, the rest numbers.
void expect_row(const json& row, size_t n_vocab) {
  ASSERT_TRUE(row.is_array());
  ASSERT_EQ(row.size(), n_vocab);
  EXPECT_TRUE(row[0].is_null()) << row[0];
  EXPECT_TRUE(row[1].is_null()) << row[1];
  for (size_t i = 2; i < row.size(); ++i) ASSERT_TRUE(row[i].is_number()) << i << ": " << row[i];
}

TEST(LogitsCli, NonFiniteLogitsAreWrittenAsJsonNull) {
  if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
  std::filesystem::remove_all(kDir);
  std::filesystem::create_directories(kDir);
  std::ofstream(kDir + "/corpus.txt") << "open the file\touvrez le fichier\n"
                                         "save the document\tenregistrez le document\n"
                                         "close the window\tfermez la fenetre\n";
  auto tok = testing::run_gpstream(kDir, "train-tokenizer corpus.txt -o tok --vocab-size 300");
  ASSERT_EQ(tok.code, 0) << tok.err;
  auto init = testing::run_gpstream(kDir,
                                    "init-model -o tiny --tokenizer tok --layers 1 --hidden 32 --heads 2 "
                                    "--kv-heads 1 --intermediate 64 --dtype f32 --untied");
  ASSERT_EQ(init.code, 0) << init.err;
  const auto n_vocab = json::parse(read_all(kDir + "/tiny/config.json"))["vocab_size"].get<size_t>();
  ASSERT_NO_FATAL_FAILURE(poison_output_rows(kDir + "/tiny"));

  const auto last = testing::run_gpstream(kDir, "logits -m tiny --ids 5,6,7 -t 1");
  ASSERT_EQ(last.code, 0) << last.err;
  ASSERT_TRUE(json::accept(last.out)) << "not JSON: " << last.out.substr(0, 200);
  expect_row(json::parse(last.out), n_vocab);

  const auto all = testing::run_gpstream(kDir, "logits -m tiny --ids 5,6,7 --all -t 1");
  ASSERT_EQ(all.code, 0) << all.err;
  ASSERT_TRUE(json::accept(all.out)) << "not JSON: " << all.out.substr(0, 200);
  const json rows = json::parse(all.out);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) expect_row(row, n_vocab);

  const auto help = testing::run_gpstream(kDir, "logits --help");
  EXPECT_NE(help.out.find("as null"), std::string::npos) << help.out;
  std::filesystem::remove_all(kDir);
}

}  // namespace
}  // namespace gpstream
