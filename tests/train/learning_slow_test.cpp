// Learning test (slow suite): a tiny byte-level model trained on 2,000 en-fr pairs ends with a dev loss
// below the unigram entropy of the dev targets (computed here from the dev labels), fixed seed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "train/byte_codec.h"
#include "train/dataset.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using testing::base_config;
using testing::corpus_tsv;
using testing::tmp_dir;

double unigram_entropy_of_labels(const std::string& dev_tsv) {
  ByteCodec codec;
  auto pairs = read_pairs_tsv(dev_tsv);
  DataOptions o;
  o.max_seq = 256;
  o.batch_tokens = 1 << 20;
  auto d = Dataset::create(pairs->pairs, codec_layout_fn(codec), o);
  auto batches = d->all_batches();
  std::map<int32_t, double> count;
  double n = 0;
  for (const auto& b : *batches)
    for (const auto& s : b.seqs)
      for (int32_t l : s.labels)
        if (l >= 0) count[l] += 1, n += 1;
  double h = 0;
  for (const auto& [id, c] : count) h -= c / n * std::log(c / n);
  return h;
}

TEST(Trainer, LearnsBelowTheUnigramEntropyOfTheDevTargets) {
  const std::string dir = tmp_dir("learn");
  const std::string train = corpus_tsv(dir, "train", 2000), dev = corpus_tsv(dir, "dev", 200);
  const double h = unigram_entropy_of_labels(dev);
  auto r = run_training(testing::parse(base_config(dir + "/run", train, dev, 250)));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_TRUE(r->dev_loss.has_value());
  std::printf("unigram entropy of dev targets %.3f nats, dev loss after 250 steps %.3f\n", h, *r->dev_loss);
  EXPECT_LT(*r->dev_loss, h);
  EXPECT_LT(r->losses.back(), r->losses.front());
  EXPECT_TRUE(std::filesystem::exists(dir + "/run/loss.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/run/metrics.jsonl"));
}

}  // namespace
}  // namespace gpstream::train
