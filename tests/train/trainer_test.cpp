// The training loop end to end on a tiny byte-level model: learning (dev loss below the unigram entropy
// of the dev targets), bit-identical resume from a checkpoint, refusal of corrupted checkpoints, exports
// that reload with the same logits, config errors.
#include "train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "../testing/forward_bounds.h"
#include "io/safetensors.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "stream/model_meta.h"
#include "train/byte_codec.h"
#include "train/checkpoint.h"
#include "train/export.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using testing::base_config;
using testing::corpus_tsv;
using testing::parse;
using testing::tmp_dir;

TEST(TrainConfig, RefusesBadKeysAndValues) {
  const std::string ok = base_config("/tmp/x", "a.tsv", "b.tsv", 5);
  EXPECT_TRUE(parse_train_config(ok).ok());
  auto bad = [&](const std::string& from, const std::string& to, const std::string& expect) {
    std::string t = ok;
    const size_t p = t.find(from);
    ASSERT_NE(p, std::string::npos) << from;
    t.replace(p, from.size(), to);
    auto r = parse_train_config(t);
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_NE(r.error().message().find(expect), std::string::npos) << r.error().message();
  };
  bad("\"mode\": \"batch\"", "\"mode\": \"reencode\"", "mode");
  bad("\"mode\": \"batch\"", "\"mode\": \"group\", \"positions_removed\": \"both\"",
      "field 'data.positions_removed' must be one of none, source, target, all");
  {
    std::string t = ok;
    const std::string mode = "\"mode\": \"batch\"";
    t.replace(t.find(mode), mode.size(), "\"mode\": \"group\", \"positions_removed\": \"source\"");
    auto r = parse_train_config(t);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->data.positions_removed, stream::PositionsRemoved::Source);
  }
  // Errors name the file and the field's path in it.
  bad("\"lr\": 0.005", "\"lr\": \"fast\"", "train config: field 'optimizer.lr' must be a number, got string");
  bad("\"lr\": 0.005", "\"lr\": 11", "field 'optimizer.lr' must be a number in [0, 10], got 11");
  bad("\"seed\": 7", "\"seed\": 7, \"stepz\": 5", "unknown key 'stepz'");
  bad("\"warmup_steps\": 10", "\"warmup_stepz\": 10", "unknown key 'schedule.warmup_stepz'");
  bad("\"max_seq\": 256", "\"max_seq\": 2.5", "field 'data.max_seq' must be an integer, got number");
  bad("\"max_seq\": 256", "\"max_seq\": 1e7",
      "field 'data.max_seq' must be an integer in [2, 1000000], got 1e+07");
  bad("\"seed\": 7", "\"seed\": -7", "field 'seed' must be an integer in [0, 18446744073709551615], got -7");
  // A wait-k range whose end is below its start: the end is out of [k_min, 1000000].
  bad("\"mode\": \"batch\"", "\"mode\": \"batch\", \"k\": [3, 2]",
      "field 'data.k[1]' must be an integer in [3, 1000000], got 2");
  bad("\"seed\": 7", "\"seed\": 7, \"lora\": {\"targets\": [\"qq\"]}", "unknown LoRA target");
  bad("{\"tokenizer\": \"bytes\",", "{", "tokenizer");
  bad("\"seed\": 7", "\"seed\": 7, \"checkpoint\": {\"keep_every_steps\": -5}", "keep_every_steps");
  EXPECT_FALSE(parse_train_config("{").ok());
}

TEST(Trainer, ResumeFromCheckpointIsBitIdentical) {
  const std::string dir = tmp_dir("resume");
  const std::string train = corpus_tsv(dir, "train", 300), dev = corpus_tsv(dir, "dev", 20);
  const std::string extra = R"(, "checkpoint": {"every_steps": 4, "every_minutes": 0, "keep": 2},
                               "lora": {"rank": 0})";
  // Uninterrupted.
  auto full = run_training(parse(base_config(dir + "/a", train, dev, 12, extra)));
  ASSERT_TRUE(full.ok()) << full.error().message();
  // Killed after step 10 (last checkpoint: step 8), then resumed.
  TrainRunOptions stop;
  stop.stop_after_steps = 10;
  auto first = run_training(parse(base_config(dir + "/b", train, dev, 12, extra)), stop);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(first->losses.size(), 10u);
  TrainRunOptions resume;
  resume.resume = dir + "/b";
  auto second = run_training(parse(base_config(dir + "/b", train, dev, 12, extra)), resume);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(second->first_step, 8);
  ASSERT_EQ(second->losses.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(second->losses[i], full->losses[8 + i]) << "step " << 9 + i;
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(first->losses[i], full->losses[i]);
  EXPECT_EQ(second->dev_loss, full->dev_loss);
  // keep = 2: only the last two checkpoints remain.
  EXPECT_EQ(list_checkpoints(dir + "/b/checkpoints").size(), 2u);
}

// Pruning works on file names: the newest `keep` stay, and with keep_every every multiple of it; names that
// are not checkpoints (or whose step would overflow) are left alone.
TEST(Checkpoint, PruneKeepsTheNewestAndEveryMultiple) {
  const std::string dir = tmp_dir("prune");
  auto touch = [&](const std::string& name) { std::ofstream(dir + "/" + name) << "x"; };
  for (int step = 100; step <= 1300; step += 100) {
    char name[64];
    std::snprintf(name, sizeof name, "checkpoint-%08d.bin", step);
    touch(name);
  }
  touch("checkpoint-999999999999999999999999.bin");  // 24 digits: not a checkpoint
  touch("notes.txt");
  ASSERT_EQ(list_checkpoints(dir).size(), 13u);
  ASSERT_TRUE(prune_checkpoints(dir, 2, 500).ok());
  std::vector<std::string> left;
  for (const auto& p : list_checkpoints(dir)) left.push_back(std::filesystem::path(p).filename().string());
  EXPECT_EQ(left, (std::vector<std::string>{"checkpoint-00000500.bin", "checkpoint-00001000.bin",
                                            "checkpoint-00001200.bin", "checkpoint-00001300.bin"}));
  EXPECT_TRUE(std::filesystem::exists(dir + "/checkpoint-999999999999999999999999.bin"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/notes.txt"));
  ASSERT_TRUE(prune_checkpoints(dir, 1).ok());  // without keep_every: only the newest
  ASSERT_EQ(list_checkpoints(dir).size(), 1u);
  EXPECT_EQ(std::filesystem::path(list_checkpoints(dir)[0]).filename().string(), "checkpoint-00001300.bin");
}

TEST(Checkpoint, CorruptedOrTruncatedIsRefused) {
  const std::string dir = tmp_dir("ckpt");
  CheckpointState s;
  s.step = 3;
  s.fingerprint = "x";
  s.values = {1, 2, 3};
  s.m = {4, 5, 6};
  s.v = {7, 8, 9};
  const std::string p = dir + "/checkpoint-00000003.bin";
  ASSERT_TRUE(write_checkpoint(p, s).ok());
  auto r = read_checkpoint(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->values, s.values);
  EXPECT_EQ(r->v, s.v);
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto check_bad = [&](const std::string& content, const char* what) {
    const std::string q = dir + "/bad.bin";
    std::ofstream(q, std::ios::binary) << content;
    auto b = read_checkpoint(q);
    ASSERT_FALSE(b.ok()) << what;
    EXPECT_NE(b.error().message().find("corrupted or incomplete"), std::string::npos) << b.error().message();
  };
  std::string flipped = bytes;
  flipped[bytes.size() - 12] ^= 1;  // one bit of the data
  check_bad(flipped, "bit flip");
  check_bad(bytes.substr(0, bytes.size() - 5), "truncated");
  check_bad(bytes.substr(0, 10), "header cut");
  check_bad("GPSCKPT1" + std::string(16, '\xff'), "huge header length");
}

TEST(Export, HfDirectoryReloadsWithTheSameLogitsAndPeftRoundTrips) {
  const std::string dir = tmp_dir("export");
  const std::string train = corpus_tsv(dir, "train", 100), dev = corpus_tsv(dir, "dev", 10);
  const std::string extra = R"(, "lora": {"rank": 4, "alpha": 8, "targets": ["q", "v", "down"]},
                               "export": {"merge_lora": true})";
  // LoRA needs a base: make one by a short full run first.
  auto base = run_training(parse(base_config(dir + "/base", train, dev, 3)));
  ASSERT_TRUE(base.ok()) << base.error().message();
  // Batch mode trains consecutive positions, so the exported model runs with φ = S (gpe.md §6 offline).
  auto base_meta = stream::ModelMeta::load(dir + "/base/model");
  ASSERT_TRUE(base_meta.ok()) << base_meta.error().message();
  EXPECT_TRUE(base_meta->phi.source_length);
  EXPECT_EQ(base_meta->paradigm, stream::Paradigm::Offline);
  std::string cfg = base_config(dir + "/lora", train, dev, 3, extra);
  const std::string scratch_begin = "\"scratch\"";
  cfg.replace(cfg.find(scratch_begin), cfg.find("}},") + 1 - cfg.find(scratch_begin),
              "\"init\": \"" + dir + "/base/model\"");
  auto lr = run_training(parse(cfg));
  ASSERT_TRUE(lr.ok()) << lr.error().message();
  for (const char* f : {"config.json", "model.safetensors", "generation_config.json", "gpstream.json"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/lora/model/" + f)) << f;
  for (const char* f : {"adapter_config.json", "adapter_model.safetensors"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/lora/adapter/" + f)) << f;

  // The LoRA model (base + adapter loaded through the PEFT import) vs the merged export through the
  // inference engine, on a group layout.
  auto mc = model::load_hf_config(dir + "/base/model");
  auto bt = io::read_safetensors_dir(dir + "/base/model");
  ASSERT_TRUE(mc.ok() && bt.ok());
  LoraOptions lo;
  lo.rank = 4;
  lo.alpha = 8;
  lo.targets = {true, false, true, false, false, false, true};
  auto tm = TrainModel::create(*mc, *bt, lo, 0, {256, 256}, 2);
  ASSERT_TRUE(tm.ok());
  ASSERT_TRUE(load_peft_adapter(**tm, dir + "/lora/adapter").ok());
  io::TensorMap adapter;
  ASSERT_TRUE(io::read_safetensors(dir + "/lora/adapter/adapter_model.safetensors", adapter).ok());
  EXPECT_NE(adapter.find("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"), nullptr);
  EXPECT_NE(adapter.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), nullptr);
  EXPECT_EQ(adapter.find("base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight"), nullptr);

  ByteCodec codec;
  auto layout =
      codec_layout_fn(codec)({"open the file", "ouvrez le fichier"}, stream::Paradigm::Group, 2, {});
  ASSERT_TRUE(layout.ok());
  TrainBatch b;
  b.seqs.push_back(sequence_from_layout(*layout));
  ForwardOptions fo;
  fo.all_logits = true;
  fo.training = false;
  ASSERT_TRUE((*tm)->forward(b, fo).ok());
  auto inf = model::Transformer::load(dir + "/lora/model", 1);
  ASSERT_TRUE(inf.ok()) << inf.error().message();
  model::KvCache cache((*inf)->config());
  std::vector<float> logits;
  ASSERT_TRUE((*inf)->forward(layout->to_batch(), cache, logits).ok());
  ASSERT_EQ(static_cast<int64_t>(logits.size()), (*tm)->n_logit_rows() * mc->n_vocab);
  float worst = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    worst = std::max(worst, std::abs(logits[i] - (*tm)->logits()[i]));
  // Two fp32 forwards with their own code (forward_bounds.h). Per adapted linear the LoRA side adds
  // s·B(A x) (dots of E and rank terms, the scale) and the merged side rounds W + sBA once: with
  // |sBA| ≤ |W| entrywise (a short fine-tune), ≤ rank + 3 more roundings of Σ|W||x| on each of a layer's
  // four linear stages.
  testing::ForwardBoundOptions o;
  o.shared_code = false;
  o.max_rows = static_cast<int64_t>(layout->rows.size());
  o.extra_roundings = 4.0 * (lo.rank + 3);
  EXPECT_LE(worst, testing::forward_order_bound((*inf)->config(), (*inf)->weights(), o).logits);
}

}  // namespace
}  // namespace gpstream::train
