// SIGINT and SIGTERM during `gpstream train` and `gpstream train-speech`: the command stops after the step it
// is in, writes a checkpoint, says where on stderr and exits 130 (SIGINT) or 143 (SIGTERM, 128 + the signal
// as a shell reports it); `--resume` then finishes the run, and the final parameters, optimizer moments and
// exported weights are bit-identical to an uninterrupted run of the same config (every random stream is a
// function of the seed and the checkpointed counters). Skipped when the gpstream binary is not built.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../speech/speech_test_util.h"
#include "cli_run.h"
#include "train/checkpoint.h"
#include "train/run_folder.h"

extern char** environ;

namespace gpstream {
namespace {

namespace fs = std::filesystem;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/train_interrupt_test_tmp/" + std::to_string(getpid());

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t count_lines(const std::string& path) {
  const std::string t = read_text(path);
  return static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
}

// gpstream with `args`, stdout and stderr into files; returns the child's pid.
pid_t spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<std::string> all = {testing::kGpstreamBin};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

struct Interrupted {
  int exit_status = -1;  // -1: did not exit normally (e.g. killed by the signal)
  std::string err;
};

// Starts the training, waits until metrics.jsonl holds `after_steps` lines, sends `sig` and waits for the
// exit.
Interrupted train_and_interrupt(const std::vector<std::string>& args, const std::string& run_dir,
                                size_t after_steps, int sig) {
  Interrupted r;
  const std::string err = run_dir + ".stderr";
  const pid_t pid = spawn(args, run_dir + ".stdout", err);
  if (pid < 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (count_lines(run_dir + "/metrics.jsonl") < after_steps &&
         std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {  // ended before the signal: a failure to report
      r.err = "ended before the signal: " + read_text(err);
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  r.err = read_text(err);
  return r;
}

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args);
}

// The interrupted run's checkpoint: named on stderr, the run's newest, at the step metrics.jsonl ends at.
void expect_checkpoint_reported(const Interrupted& r, const std::string& command, const char* signal_name,
                                const std::string& run_dir, int64_t total_steps) {
  auto path = train::resolve_resume_checkpoint(run_dir);
  ASSERT_TRUE(path.ok()) << path.error().message() << "\n" << r.err;
  EXPECT_NE(r.err.find("gpstream " + command + ": interrupted by " + signal_name + ": saved checkpoint " +
                       *path + "; continue with --resume " + run_dir + "\n"),
            std::string::npos)
      << r.err;
  auto ckpt = train::read_checkpoint(*path);
  ASSERT_TRUE(ckpt.ok()) << ckpt.error().message();
  EXPECT_GT(ckpt->step, 0);
  EXPECT_LT(ckpt->step, total_steps);
  EXPECT_EQ(static_cast<int64_t>(count_lines(run_dir + "/metrics.jsonl")), ckpt->step);
  EXPECT_FALSE(fs::exists(run_dir + "/model")) << "an interrupted run exports nothing";
}

void expect_same_final_state(const std::string& a_dir, const std::string& b_dir, int64_t steps,
                             const std::vector<std::string>& weight_files) {
  auto a = train::read_checkpoint(*train::resolve_resume_checkpoint(a_dir));
  auto b = train::read_checkpoint(*train::resolve_resume_checkpoint(b_dir));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->step, steps);
  EXPECT_EQ(b->step, steps);
  EXPECT_EQ(a->tokens_seen, b->tokens_seen);
  EXPECT_TRUE(a->values == b->values) << "parameters differ";
  EXPECT_TRUE(a->m == b->m) << "first moments differ";
  EXPECT_TRUE(a->v == b->v) << "second moments differ";
  for (const std::string& f : weight_files) {
    const std::string wa = read_text(a_dir + "/model/" + f), wb = read_text(b_dir + "/model/" + f);
    EXPECT_FALSE(wa.empty()) << f;
    EXPECT_TRUE(wa == wb) << f << " differs";
  }
  // Every step's loss, as the uninterrupted run logged it.
  std::ifstream ma(a_dir + "/metrics.jsonl"), mb(b_dir + "/metrics.jsonl");
  std::string la, lb;
  int64_t n = 0;
  while (std::getline(ma, la)) {
    ASSERT_TRUE(static_cast<bool>(std::getline(mb, lb))) << "step " << n + 1;
    EXPECT_EQ(nlohmann::json::parse(la).at("loss"), nlohmann::json::parse(lb).at("loss")) << "step " << n + 1;
    ++n;
  }
  EXPECT_EQ(n, steps);
}

class TrainInterrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    fs::create_directories(kDir);
  }
};

constexpr int64_t kTextSteps = 300;

std::string text_config(const std::string& name) {
  const std::string tsv = kDir + "/pairs.tsv";
  if (!fs::exists(tsv)) {
    const char* en[] = {"the", "cat", "dog", "sees", "a", "red", "house", "runs", "small", "big"};
    const char* fr[] = {"le", "chat", "chien", "voit", "un", "rouge", "maison", "court", "petit", "grand"};
    std::ofstream out(tsv);
    uint64_t x = 7;
    for (int i = 0; i < 300; ++i) {
      std::string s, t;
      for (int w = 0; w < 3 + i % 4; ++w) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const size_t j = static_cast<size_t>(x >> 60) % 10;
        s += std::string(w ? " " : "") + en[j];
        t += std::string(w ? " " : "") + fr[j];
      }
      out << s << "\t" << t << "\n";
    }
  }
  const std::string path = kDir + "/" + name + ".json";
  std::ofstream(path)
      << R"({"model": {"tokenizer": "bytes", "scratch": {"hidden_size": 32, "intermediate_size": 64,
    "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1}},
  "data": {"train": ")" +
             tsv + R"(", "mode": "group", "k": [1, 3], "phi": 0.5, "max_seq": 256, "batch_tokens": 256},
  "optimizer": {"lr": 0.003}, "steps": )" +
             std::to_string(kTextSteps) + R"(, "seed": 3, "threads": 1, "log_every": 1000,
  "checkpoint": {"every_steps": 0, "every_minutes": 0, "keep": 2}, "output": ")" +
             kDir + "/" + name + R"("})";
  return path;
}

TEST_F(TrainInterrupt, SigintSavesAndResumesBitIdentically) {
  const std::string ref_cfg = text_config("ref"), cfg = text_config("int");
  auto ref = run("train " + ref_cfg);
  ASSERT_EQ(ref.code, 0) << ref.err;
  const Interrupted r = train_and_interrupt({"train", cfg}, kDir + "/int", 5, SIGINT);
  ASSERT_EQ(r.exit_status, 130) << r.err;
  expect_checkpoint_reported(r, "train", "SIGINT", kDir + "/int", kTextSteps);
  auto resumed = run("train " + cfg + " --resume " + kDir + "/int");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_final_state(kDir + "/ref", kDir + "/int", kTextSteps, {"model.safetensors"});
}

constexpr int64_t kSpeechSteps = 80;

std::string speech_config(const std::string& llm, const std::string& name) {
  const std::string data = testing::speech_sample_dir(), path = kDir + "/" + name + ".json";
  std::ofstream(path) << R"({"llm": ")" + llm + R"(", "train_manifest": ")" + data + R"(/train/manifest.tsv",
    "output_dir": ")" + kDir +
                             "/" + name + R"(",
    "encoder": {"conv_channels": 16, "d_model": 16, "n_layer": 1, "n_head": 2, "n_ff": 32, "chunk_frames": 4,
                "proj_hidden": 32},
    "llm_training": "lora", "lora_rank": 4, "lora_alpha": 8, "k_min": 1, "k_max": 3, "phi": [0, 256],
    "batch_utterances": 2, "steps": )" +
                             std::to_string(kSpeechSteps) + R"(, "lr": 0.02, "warmup_steps": 2,
    "schedule": "constant", "noise": true, "threads": 1, "dev_every": 0, "ckpt_every_steps": 0, "seed": 4,
    "log_every": 1000})";
  return path;
}

TEST_F(TrainInterrupt, SigtermDuringSpeechTrainingSavesAndResumesBitIdentically) {
  const std::string llm = kDir + "/speech_llm";
  testing::write_tiny_speech_llm(llm);
  const std::string ref_cfg = speech_config(llm, "sref"), cfg = speech_config(llm, "sint");
  auto ref = run("train-speech " + ref_cfg);
  ASSERT_EQ(ref.code, 0) << ref.err;
  const Interrupted r = train_and_interrupt({"train-speech", cfg}, kDir + "/sint", 3, SIGTERM);
  ASSERT_EQ(r.exit_status, 143) << r.err;
  expect_checkpoint_reported(r, "train-speech", "SIGTERM", kDir + "/sint", kSpeechSteps);
  auto resumed = run("train-speech " + cfg + " --resume " + kDir + "/sint");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_final_state(kDir + "/sref", kDir + "/sint", kSpeechSteps,
                          {"model.safetensors", "speech_encoder.safetensors"});
}

}  // namespace
}  // namespace gpstream
