// Checkpoint averaging: the mean by hand, the newest checkpoint's optimizer state, refusals.
#include "train/checkpoint_average.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "train/trainer.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using gpstream::testing::base_config;
using gpstream::testing::corpus_tsv;
using gpstream::testing::parse;
using gpstream::testing::tmp_dir;

CheckpointState state(int64_t step, std::vector<float> values, const std::string& fingerprint = "net") {
  CheckpointState s;
  s.step = s.adam_t = step;
  s.tokens_seen = 100 * step;
  s.data.epoch = step / 10;
  s.data.batch = step % 10;
  s.elapsed_s = 1.5 * static_cast<double>(step);
  s.fingerprint = fingerprint;
  s.m.assign(values.size(), static_cast<float>(step));
  s.v.assign(values.size(), static_cast<float>(2 * step));
  s.values = std::move(values);
  return s;
}

std::string write(const std::string& dir, const CheckpointState& s) {
  const std::string p = dir + "/checkpoint-" + std::to_string(s.step) + ".bin";
  EXPECT_TRUE(write_checkpoint(p, s).ok());
  return p;
}

TEST(CheckpointAverage, MeanOfTheValuesWithTheNewestState) {
  const std::string dir = tmp_dir("ckpt_avg");
  // The newest (step 30) is given in the middle. Column 2 cancels to 1/3 only if summed in double: in float,
  // 1e8 + 1 == 1e8.
  const std::string a = write(dir, state(10, {1.0f, -2.0f, 1e8f, 0.5f}));
  const std::string b = write(dir, state(30, {2.0f, 4.0f, 1.0f, 0.25f}));
  const std::string c = write(dir, state(20, {4.0f, 1.0f, -1e8f, 0.125f}));
  auto avg = average_checkpoints({a, b, c});
  ASSERT_TRUE(avg.ok()) << avg.error().message();
  const std::vector<float> want = {7.0f / 3.0f, 1.0f, static_cast<float>(1.0 / 3.0),
                                   static_cast<float>(0.875 / 3.0)};
  ASSERT_EQ(avg->values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(avg->values[i], want[i]) << i;
  EXPECT_EQ(avg->step, 30);
  EXPECT_EQ(avg->adam_t, 30);
  EXPECT_EQ(avg->tokens_seen, 3000);
  EXPECT_EQ(avg->data.epoch, 3);
  EXPECT_EQ(avg->data.batch, 0);
  EXPECT_EQ(avg->elapsed_s, 45.0);
  EXPECT_EQ(avg->m, std::vector<float>(4, 30.0f));
  EXPECT_EQ(avg->v, std::vector<float>(4, 60.0f));
  EXPECT_EQ(avg->fingerprint, "net");
  // One checkpoint: itself.
  auto one = average_checkpoints({a});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->values, (std::vector<float>{1.0f, -2.0f, 1e8f, 0.5f}));
}

TEST(CheckpointAverage, CheckpointsOfAnotherRunAreRefused) {
  const std::string dir = tmp_dir("ckpt_avg_bad");
  const std::string a = write(dir, state(10, {1, 2, 3}));
  const std::string other_net = write(dir, state(11, {1, 2, 3}, "other"));
  const std::string other_size = write(dir, state(12, {1, 2}));
  EXPECT_FALSE(average_checkpoints({}).ok());
  auto fp = average_checkpoints({a, other_net});
  ASSERT_FALSE(fp.ok());
  EXPECT_NE(fp.error().message().find(other_net), std::string::npos) << fp.error().message();
  auto size = average_checkpoints({a, other_size});
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message().find("2 values"), std::string::npos) << size.error().message();
  auto missing = average_checkpoints({a, dir + "/none.bin"});
  EXPECT_FALSE(missing.ok());
}

// The documented use: average a run's last checkpoints, resume from the result with the config's steps at
// its step, and the run ends at once with the averaged parameters (its final checkpoint) and an export.
TEST(CheckpointAverage, ResumingFromTheAverageExportsIt) {
  const std::string dir = tmp_dir("ckpt_avg_run");
  const std::string train = corpus_tsv(dir, "train", 100), dev = corpus_tsv(dir, "dev", 10);
  const std::string extra = R"(, "checkpoint": {"every_steps": 3, "every_minutes": 0, "keep": 3},
                               "lora": {"rank": 0})";
  auto run = run_training(parse(base_config(dir + "/run", train, dev, 6, extra)));
  ASSERT_TRUE(run.ok()) << run.error().message();
  const std::vector<std::string> ckpts = list_checkpoints(dir + "/run/checkpoints");
  ASSERT_EQ(ckpts.size(), 2u);  // steps 3 and 6
  auto avg = average_checkpoints(ckpts);
  ASSERT_TRUE(avg.ok()) << avg.error().message();
  ASSERT_TRUE(write_checkpoint(dir + "/avg.bin", *avg).ok());
  TrainRunOptions resume;
  resume.resume = dir + "/avg.bin";
  auto exported = run_training(parse(base_config(dir + "/avg", train, dev, 6, extra)), resume);
  ASSERT_TRUE(exported.ok()) << exported.error().message();
  EXPECT_TRUE(exported->losses.empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/avg/model/model.safetensors"));
  const std::vector<std::string> after = list_checkpoints(dir + "/avg/checkpoints");
  ASSERT_FALSE(after.empty());
  auto last = read_checkpoint(after.back());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->values, avg->values);
  auto a = read_checkpoint(ckpts[0]), b = read_checkpoint(ckpts[1]);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->values, b->values);
  EXPECT_NE(last->values, b->values);
}

// --export-only exports the checkpoint it resumes from however many steps the config asks for, and is refused
// without one.
TEST(CheckpointAverage, ExportOnlyTrainsNoStep) {
  const std::string dir = tmp_dir("ckpt_export_only");
  const std::string train = corpus_tsv(dir, "train", 100), dev = corpus_tsv(dir, "dev", 10);
  const std::string extra = R"(, "checkpoint": {"every_steps": 3, "every_minutes": 0, "keep": 3},
                               "lora": {"rank": 0})";
  TrainRunOptions stop;
  stop.stop_after_steps = 4;  // leaves the step-3 checkpoint
  ASSERT_TRUE(run_training(parse(base_config(dir + "/run", train, dev, 12, extra)), stop).ok());
  const std::vector<std::string> ckpts = list_checkpoints(dir + "/run/checkpoints");
  ASSERT_EQ(ckpts.size(), 1u);
  auto saved = read_checkpoint(ckpts[0]);
  ASSERT_TRUE(saved.ok());
  ASSERT_EQ(saved->step, 3);

  TrainRunOptions no_checkpoint;
  no_checkpoint.export_only = true;
  EXPECT_FALSE(run_training(parse(base_config(dir + "/none", train, dev, 12, extra)), no_checkpoint).ok());

  TrainRunOptions exp;
  exp.resume = ckpts[0];
  exp.export_only = true;
  auto exported = run_training(parse(base_config(dir + "/exp", train, dev, 12, extra)), exp);
  ASSERT_TRUE(exported.ok()) << exported.error().message();
  EXPECT_EQ(exported->first_step, 3);
  EXPECT_TRUE(exported->losses.empty()) << exported->losses.size() << " steps trained by an export";
  EXPECT_TRUE(std::filesystem::exists(dir + "/exp/model/model.safetensors"));
  const std::vector<std::string> after = list_checkpoints(dir + "/exp/checkpoints");
  ASSERT_FALSE(after.empty());
  auto last = read_checkpoint(after.back());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->step, 3);
  EXPECT_EQ(last->values, saved->values);
}

}  // namespace
}  // namespace gpstream::train
