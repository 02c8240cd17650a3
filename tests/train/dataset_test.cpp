// Dataset: TSV parsing, layouts through the stream layer, packing, bucketing, seeded determinism.
#include "train/dataset.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "train/byte_codec.h"

namespace gpstream::train {
namespace {

std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = std::string(GPSTREAM_BINARY_DIR) + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<Pair> some_pairs(int n) {
  std::vector<Pair> p;
  for (int i = 0; i < n; ++i)
    p.push_back({"the cat " + std::to_string(i) + std::string(static_cast<size_t>(i % 5), 'a'),
                 "le chat " + std::to_string(i * 7)});
  return p;
}

TEST(ReadPairsTsv, ParsesSkipsAndRefuses) {
  auto f = read_pairs_tsv(write_tmp("pairs_ok.tsv", "a b\tc d\r\n\n \tx\ne\tf\n"));
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->pairs.size(), 2u);
  EXPECT_EQ(f->pairs[0].target, "c d");
  EXPECT_EQ(f->skipped_empty, 1);
  auto bad = read_pairs_tsv(write_tmp("pairs_bad.tsv", "a\tb\nno tab here\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(":2:"), std::string::npos);
  EXPECT_FALSE(read_pairs_tsv("/nonexistent/x.tsv").ok());
}

TEST(Dataset, BatchModeIsCausalWithTargetLabels) {
  ByteCodec codec;
  DataOptions o;
  o.max_seq = 64;
  o.batch_tokens = 64;
  auto d = Dataset::create({{"ab c", "xy"}}, codec_layout_fn(codec), o);
  ASSERT_TRUE(d.ok()) << d.error().message();
  auto b = d->next_batch();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->seqs.size(), 1u);
  const TrainSequence& s = b->seqs[0];
  // <s> a b ' ' c </src> <tgt> x y   (the end marker is predicted, not fed)
  const std::vector<int32_t> ids = {ByteCodec::kPrompt, 'a', 'b', ' ', 'c', ByteCodec::kSourceEnd,
                                    ByteCodec::kHeader, 'x', 'y'};
  ASSERT_EQ(s.ids, ids);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s.positions[i], static_cast<float>(i));
    EXPECT_EQ(s.groups[i], 0);
    EXPECT_EQ(s.n_src[i], static_cast<int32_t>(i + 1));
  }
  const std::vector<int32_t> labels = {-1, -1, -1, -1, -1, -1, 'x', 'y', ByteCodec::kTargetEnd};
  EXPECT_EQ(s.labels, labels);
}

// loss_on_all: every row predicts the next fed row, and the last one still predicts the end marker (a model
// pretrained without it never learns to stop).
TEST(Dataset, LossOnAllKeepsTheEndMarker) {
  ByteCodec codec;
  DataOptions o;
  o.max_seq = 64;
  o.batch_tokens = 64;
  o.loss_on_all = true;
  auto d = Dataset::create({{"ab", "xy"}}, codec_layout_fn(codec), o);
  ASSERT_TRUE(d.ok()) << d.error().message();
  auto b = d->next_batch();
  ASSERT_TRUE(b.ok());
  const TrainSequence& s = b->seqs[0];
  const std::vector<int32_t> ids = {ByteCodec::kPrompt, 'a', 'b', ByteCodec::kSourceEnd,
                                    ByteCodec::kHeader, 'x', 'y'};
  ASSERT_EQ(s.ids, ids);
  const std::vector<int32_t> labels = {'a', 'b', ByteCodec::kSourceEnd, ByteCodec::kHeader,
                                       'x', 'y', ByteCodec::kTargetEnd};
  EXPECT_EQ(s.labels, labels);
}

TEST(Dataset, GroupModeUsesTheStreamLayout) {
  ByteCodec codec;
  DataOptions o;
  o.mode = TrainMode::Group;
  o.k_min = o.k_max = 1;
  o.phi.value = 0.5f;
  o.max_seq = 64;
  o.batch_tokens = 64;
  auto d = Dataset::create({{"ab c", "xy z"}}, codec_layout_fn(codec), o);
  ASSERT_TRUE(d.ok());
  auto b = d->next_batch();
  ASSERT_TRUE(b.ok());
  const TrainSequence& s = b->seqs[0];
  auto l = codec_layout_fn(codec)({"ab c", "xy z"}, stream::Paradigm::Group, 1, o.phi);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(s.size(), l->rows.size());
  bool saw_target = false;
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s.ids[i], l->rows[i].id);
    EXPECT_EQ(s.positions[i], l->rows[i].pos);
    EXPECT_EQ(s.n_src[i], l->rows[i].n_src);
    if (s.groups[i] == 1 && !saw_target) {
      EXPECT_EQ(s.positions[i], 0.5f);  // the target group starts at φ
      saw_target = true;
    }
  }
  EXPECT_TRUE(saw_target);
}

TEST(Dataset, PackingFillsSequencesAndEpochsAreSeeded) {
  ByteCodec codec;
  DataOptions o;
  o.pack = true;
  o.max_seq = 128;
  o.batch_tokens = 256;
  o.seed = 3;
  auto pairs = some_pairs(100);
  auto d1 = Dataset::create(pairs, codec_layout_fn(codec), o);
  auto d2 = Dataset::create(pairs, codec_layout_fn(codec), o);
  ASSERT_TRUE(d1.ok() && d2.ok());
  int64_t total = 0;
  const int64_t n = d1->batches_per_epoch();
  for (int64_t i = 0; i < n; ++i) {
    auto b = d1->next_batch();
    ASSERT_TRUE(b.ok());
    EXPECT_LE(b->n_tokens(), 256);
    for (const auto& s : b->seqs) {
      EXPECT_LE(static_cast<int64_t>(s.size()), 128);
      for (size_t j = 0; j < s.size(); ++j) EXPECT_EQ(s.positions[j], static_cast<float>(j));
    }
    total += b->n_tokens();
  }
  EXPECT_EQ(total, d1->n_tokens());  // one epoch = every example once
  // Same seed, same batches; seek reproduces a position.
  d2->seek({0, 2});
  d1->seek({0, 2});
  auto a = d1->next_batch(), b = d2->next_batch();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->seqs[0].ids, b->seqs[0].ids);
  // Next epoch has a different order.
  d1->seek({1, 0});
  d2->seek({0, 0});
  EXPECT_NE(d1->next_batch()->seqs[0].ids, d2->next_batch()->seqs[0].ids);
}

TEST(Dataset, MultiKDrawsKPerExample) {
  ByteCodec codec;
  DataOptions o;
  o.mode = TrainMode::Group;
  o.k_min = 1;
  o.k_max = 9;
  o.max_seq = 128;
  o.batch_tokens = 128;
  std::vector<Pair> pairs = {{"a b c d e f g h i j", "k l m n o p"}};
  auto d = Dataset::create(pairs, codec_layout_fn(codec), o);
  ASSERT_TRUE(d.ok());
  std::set<std::vector<int32_t>> masks;
  for (int e = 0; e < 30; ++e) masks.insert(d->next_batch()->seqs[0].n_src);
  EXPECT_GT(masks.size(), 3u);
}

TEST(Dataset, RefusesBadOptions) {
  ByteCodec codec;
  DataOptions o;
  o.k_min = 3;
  o.k_max = 2;
  EXPECT_FALSE(Dataset::create(some_pairs(2), codec_layout_fn(codec), o).ok());
  o = {};
  o.mode = TrainMode::Group;
  o.pack = true;
  EXPECT_FALSE(Dataset::create(some_pairs(2), codec_layout_fn(codec), o).ok());
  o = {};
  o.max_seq = 4;
  o.batch_tokens = 4;
  EXPECT_FALSE(Dataset::create(some_pairs(2), codec_layout_fn(codec), o).ok());  // nothing fits
  o = {};
  o.positions_removed = stream::PositionsRemoved::All;  // batch mode has no groups to remove
  EXPECT_FALSE(Dataset::create(some_pairs(2), codec_layout_fn(codec), o).ok());
}

}  // namespace
}  // namespace gpstream::train
