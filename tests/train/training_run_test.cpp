// The training-run harness (train/training_run.h) driven by the text trainer on a tiny byte-level model, with
// a clock that advances a fixed 20 s per reading (RunControl::clock), so that checkpoints by minutes and
// max_minutes fall at known steps: a run killed after a checkpoint by minutes and resumed ends with the
// parameters of an uninterrupted run, bit for bit; max_minutes stops the run at the first step that reaches
// it, with a checkpoint there and the export.
#include "train/training_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "train/checkpoint.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using testing::base_config;
using testing::corpus_tsv;
using testing::parse;
using testing::tmp_dir;

// A clock reading 20 s, 40 s, 60 s, … (one tick per reading).
std::function<double()> ticking_clock() {
  auto t = std::make_shared<double>(0.0);
  return [t] { return *t += 20.0; };
}

CheckpointState newest_checkpoint(const std::string& run_dir) {
  const std::vector<std::string> all = list_checkpoints(run_dir + "/checkpoints");
  EXPECT_FALSE(all.empty()) << run_dir;
  if (all.empty()) return {};
  auto s = read_checkpoint(all.back());
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? *s : CheckpointState{};
}

TEST(TrainingRun, TextResumeAfterACheckpointByMinutesIsBitIdentical) {
  const std::string dir = tmp_dir("run_minutes");
  const std::string train = corpus_tsv(dir, "train", 120), dev = corpus_tsv(dir, "dev", 8);
  // Checkpoints by time only: one per minute of the ticking clock.
  const std::string extra = R"(, "checkpoint": {"every_steps": 0, "every_minutes": 1, "keep": 5},
                               "lora": {"rank": 0})";
  TrainRunOptions uninterrupted;
  uninterrupted.clock = ticking_clock();
  auto full = run_training(parse(base_config(dir + "/a", train, dev, 9, extra)), uninterrupted);
  ASSERT_TRUE(full.ok()) << full.error().message();

  TrainRunOptions stop;
  stop.clock = ticking_clock();
  stop.stop_after_steps = 8;  // killed: the newest checkpoint is one by minutes, before step 8
  ASSERT_TRUE(run_training(parse(base_config(dir + "/b", train, dev, 9, extra)), stop).ok());
  const int64_t saved_step = newest_checkpoint(dir + "/b").step;
  EXPECT_GT(saved_step, 0);
  EXPECT_LT(saved_step, 8);
  TrainRunOptions resume;
  resume.clock = ticking_clock();
  resume.resume = dir + "/b";
  auto rest = run_training(parse(base_config(dir + "/b", train, dev, 9, extra)), resume);
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_EQ(rest->first_step, saved_step);

  const CheckpointState a = newest_checkpoint(dir + "/a"), b = newest_checkpoint(dir + "/b");
  EXPECT_EQ(a.step, 9);
  EXPECT_EQ(b.step, 9);
  EXPECT_EQ(a.tokens_seen, b.tokens_seen);
  EXPECT_TRUE(a.values == b.values) << "the resumed run's parameters differ";
  EXPECT_TRUE(a.m == b.m && a.v == b.v) << "the resumed run's optimizer moments differ";
  EXPECT_EQ(rest->dev_loss, full->dev_loss);
}

TEST(TrainingRun, TextMaxMinutesStopsWithACheckpointAndExports) {
  const std::string dir = tmp_dir("run_max_minutes");
  const std::string train = corpus_tsv(dir, "train", 60), dev = corpus_tsv(dir, "dev", 4);
  const std::string extra = R"(, "max_minutes": 1, "checkpoint": {"every_steps": 0, "every_minutes": 0})";
  TrainRunOptions opt;
  opt.clock = ticking_clock();
  std::vector<std::string> messages;
  opt.on_message = [&](const std::string& m) { messages.push_back(m); };
  auto r = run_training(parse(base_config(dir + "/run", train, dev, 20, extra)), opt);
  ASSERT_TRUE(r.ok()) << r.error().message();
  // The clock reads 20 s at the start and 40, 60, 80 s after steps 1, 2, 3: step 3 ends the first minute.
  EXPECT_EQ(r->losses.size(), 3u);
  EXPECT_EQ(newest_checkpoint(dir + "/run").step, 3);
  EXPECT_FALSE(r->model_dir.empty());
  EXPECT_TRUE(std::filesystem::exists(r->model_dir + "/model.safetensors"));
  EXPECT_NE(std::find(messages.begin(), messages.end(), "stopping at step 3: max_minutes reached"),
            messages.end());
}

}  // namespace
}  // namespace gpstream::train
