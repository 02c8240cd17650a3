// Checkpoints altered by someone who recomputes the checksum (FNV-1a, no secret): every header field is
// checked before use, by read_checkpoint (ranges, counts against the file's length, finite values) and by the
// resuming run (fingerprint, seed, parameter count, data position), and each refusal names the file and the
// field. End to end: a run resumed from such a file stops with that error instead of crashing or training on.
#include "train/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

#include "train/checkpoint_average.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using testing::base_config;
using testing::corpus_tsv;
using testing::parse;
using testing::tmp_dir;

// A checkpoint file taken apart: "GPSCKPT1" | u64 header length | header | f32 values, m, v | u64 FNV-1a.
struct Parts {
  nlohmann::ordered_json header;
  std::vector<float> values, m, v;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

Parts split(const std::string& bytes) {
  uint64_t hl = 0;
  std::memcpy(&hl, bytes.data() + 8, 8);
  Parts p;
  p.header = nlohmann::ordered_json::parse(bytes.substr(16, hl));
  const size_t n = p.header["n_params"].get<size_t>();
  const char* data = bytes.data() + 16 + hl;
  for (auto* a : {&p.values, &p.m, &p.v}) {
    a->resize(n);
    std::memcpy(a->data(), data, 4 * n);
    data += 4 * n;
  }
  return p;
}

// Writes the parts as a checkpoint with a checksum that matches, as an attacker would.
void join(const Parts& p, const std::string& path) {
  const std::string header = p.header.dump();
  std::string out = "GPSCKPT1";
  const uint64_t hl = header.size();
  out.append(reinterpret_cast<const char*>(&hl), 8);
  out += header;
  for (const auto* a : {&p.values, &p.m, &p.v})
    out.append(reinterpret_cast<const char*>(a->data()), 4 * a->size());
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : out) h = (h ^ c) * 0x100000001b3ull;
  out.append(reinterpret_cast<const char*>(&h), 8);
  std::ofstream(path, std::ios::binary) << out;
}

// `original` with `edit` applied to its parts, written with a valid checksum to `path`.
std::string tampered(const std::string& original, const std::string& path,
                     const std::function<void(Parts&)>& edit) {
  Parts p = split(read_bytes(original));
  edit(p);
  join(p, path);
  return path;
}

// Keeps the first n parameters (and their moments) and says so in the header.
void keep_params(Parts& p, size_t n) {
  p.values.resize(n);
  p.m.resize(n);
  p.v.resize(n);
  p.header["n_params"] = n;
}

CheckpointState small_state() {
  CheckpointState s;
  s.step = s.adam_t = 3;
  s.tokens_seen = 300;
  s.data = {1, 2};
  s.seed = 7;
  s.elapsed_s = 1.5;
  s.fingerprint = "net";
  s.values = {1, 2, 3};
  s.m = {4, 5, 6};
  s.v = {7, 8, 9};
  return s;
}

TEST(Checkpoint, TamperedHeadersWithAValidChecksumAreRefused) {
  const std::string dir = tmp_dir("ckpt_tampered");
  const std::string good = dir + "/checkpoint-00000003.bin";
  ASSERT_TRUE(write_checkpoint(good, small_state()).ok());
  const std::string q = dir + "/bad.bin";
  // The helpers round-trip: an unchanged file reads.
  ASSERT_TRUE(read_checkpoint(tampered(good, q, [](Parts&) {})).ok());

  auto expect_refused = [&](const std::function<void(Parts&)>& edit, const std::string& want) {
    auto r = read_checkpoint(tampered(good, q, edit));
    ASSERT_FALSE(r.ok()) << "accepted; expected: " << want;
    EXPECT_NE(r.error().message().find(q), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find(want), std::string::npos) << r.error().message();
  };
  const int64_t max = kCheckpointMaxCounter;
  for (const char* key : {"step", "tokens_seen", "epoch", "batch", "adam_t"}) {
    expect_refused([&](Parts& p) { p.header[key] = -5; }, "field '" + std::string(key) + "' is -5");
    expect_refused([&](Parts& p) { p.header[key] = max + 1; }, "field '" + std::string(key) + "' is");
    expect_refused([&](Parts& p) { p.header[key] = 2.5; }, "must be an integer");
    expect_refused([&](Parts& p) { p.header[key] = "3"; }, "field '" + std::string(key) + "' is \"3\"");
    expect_refused([&](Parts& p) { p.header.erase(key); }, "field '" + std::string(key) + "' is missing");
  }
  // The counters' largest value reads.
  ASSERT_TRUE(read_checkpoint(tampered(good, q, [&](Parts& p) { p.header["tokens_seen"] = max; })).ok());
  expect_refused([](Parts& p) { p.header["seed"] = -1; }, "field 'seed' is -1");
  expect_refused([](Parts& p) { p.header["elapsed_s"] = -1.0; }, "field 'elapsed_s' is -1");
  expect_refused([](Parts& p) { p.header["elapsed_s"] = "soon"; }, "field 'elapsed_s'");
  expect_refused([](Parts& p) { p.header["fingerprint"] = ""; }, "field 'fingerprint'");
  expect_refused([](Parts& p) { p.header["fingerprint"] = 12; }, "field 'fingerprint'");
  // Parameter counts: at least one, and what the file's length holds.
  expect_refused([](Parts& p) { keep_params(p, 0); }, "field 'n_params' is 0");
  expect_refused([](Parts& p) { p.header["n_params"] = 2; }, "field 'n_params' is 2");
  expect_refused([](Parts& p) { p.header["n_params"] = -3; }, "field 'n_params' is -3");
  expect_refused([](Parts& p) { p.header["n_params"] = std::numeric_limits<uint64_t>::max() / 4; },
                 "field 'n_params'");
  {
    auto r = read_checkpoint(tampered(good, q, [](Parts& p) { p.header["version"] = 2; }));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
    EXPECT_NE(r.error().message().find("unknown version 2"), std::string::npos) << r.error().message();
  }
  {
    const std::string text = dir + "/array.bin";
    std::ofstream(text, std::ios::binary)
        << "GPSCKPT1" << std::string("\x02\0\0\0\0\0\0\0", 8) << "[]" << std::string(8, '\0');
    auto r = read_checkpoint(text);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("not a JSON object"), std::string::npos) << r.error().message();
  }
  // Values and moments: finite, second moments >= 0.
  expect_refused([](Parts& p) { p.values[1] = std::numeric_limits<float>::quiet_NaN(); }, "values[1]");
  expect_refused([](Parts& p) { p.m[2] = std::numeric_limits<float>::infinity(); }, "m[2]");
  expect_refused([](Parts& p) { p.v[0] = -1.0f; }, "v[0]");
}

TEST(Checkpoint, ResumeChecksTheCheckpointAgainstTheRun) {
  const CheckpointState s = small_state();
  CheckpointExpectation e;
  e.fingerprint = "net";
  e.seed = 7;
  e.n_params = 3;
  e.batches_per_epoch = 2;
  EXPECT_TRUE(check_resume_checkpoint(s, "c.bin", e).ok());
  auto expect_refused = [&](CheckpointState t, CheckpointExpectation x, const std::string& want) {
    const Status st = check_resume_checkpoint(t, "c.bin", x);
    ASSERT_FALSE(st.ok()) << want;
    EXPECT_NE(st.error().message().find("checkpoint c.bin"), std::string::npos) << st.error().message();
    EXPECT_NE(st.error().message().find(want), std::string::npos) << st.error().message();
  };
  CheckpointExpectation other = e;
  other.fingerprint = "other";
  expect_refused(s, other, "field 'fingerprint' is 'net'");
  other = e;
  other.seed = 8;
  expect_refused(s, other, "field 'seed' is 7");
  other = e;
  other.n_params = 4;
  expect_refused(s, other, "holds 3 parameters (field 'n_params') but this run's model has 4");
  CheckpointState t = s;
  t.adam_t = 2;
  expect_refused(t, e, "field 'adam_t' is 2 but field 'step' is 3");
  t = s;
  t.data.batch = 3;
  expect_refused(t, e, "field 'batch' is 3 but epoch 1 of this run's data has 2 batches");
  other = e;
  other.batches_per_epoch = -1;  // unknown: not checked
  EXPECT_TRUE(check_resume_checkpoint(t, "c.bin", other).ok());
}

TEST(Checkpoint, AveragingRefusesTamperedFiles) {
  const std::string dir = tmp_dir("ckpt_tampered_avg");
  const std::string good = dir + "/checkpoint-00000003.bin";
  ASSERT_TRUE(write_checkpoint(good, small_state()).ok());
  const std::string bad =
      tampered(good, dir + "/checkpoint-00000004.bin", [](Parts& p) { p.header["step"] = -5; });
  auto avg = average_checkpoints({good, bad});
  ASSERT_FALSE(avg.ok());
  EXPECT_NE(avg.error().message().find(bad), std::string::npos) << avg.error().message();
  EXPECT_NE(avg.error().message().find("field 'step' is -5"), std::string::npos) << avg.error().message();
}

// A tiny run's real checkpoint, altered with the checksum recomputed: resuming stops with an error that names
// the file and the field (a negative data position crashed the data loader, a parameter count other than the
// model's crashed the forward pass, and a negative step trained again from there).
TEST(Trainer, TamperedCheckpointsAreRefusedAtResume) {
  const std::string dir = tmp_dir("resume_tampered");
  const std::string train = corpus_tsv(dir, "train", 40), dev = corpus_tsv(dir, "dev", 4);
  const std::string extra = R"(, "checkpoint": {"every_steps": 2, "every_minutes": 0, "keep": 2},
                               "lora": {"rank": 0})";
  TrainRunOptions stop;
  stop.stop_after_steps = 3;  // leaves the step-2 checkpoint
  ASSERT_TRUE(run_training(parse(base_config(dir + "/run", train, dev, 4, extra)), stop).ok());
  const std::vector<std::string> ckpts = list_checkpoints(dir + "/run/checkpoints");
  ASSERT_EQ(ckpts.size(), 1u);
  const std::string good = ckpts[0];
  const size_t n_params = split(read_bytes(good)).values.size();

  auto expect_refused = [&](const std::function<void(Parts&)>& edit, const std::string& want) {
    const std::string bad = tampered(good, dir + "/bad.bin", edit);
    TrainRunOptions resume;
    resume.resume = bad;
    auto r = run_training(parse(base_config(dir + "/resumed", train, dev, 4, extra)), resume);
    ASSERT_FALSE(r.ok()) << "resumed; expected: " << want;
    EXPECT_NE(r.error().message().find(bad), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find(want), std::string::npos) << r.error().message();
  };
  expect_refused(
      [](Parts& p) {
        p.header["batch"] = -7;
        p.header["epoch"] = -3;
      },
      "field 'epoch' is -3");
  expect_refused([](Parts& p) { p.header["step"] = -5; }, "field 'step' is -5");
  expect_refused([](Parts& p) { p.header["step"] = 1; }, "field 'adam_t' is 2 but field 'step' is 1");
  expect_refused([](Parts& p) { p.header["batch"] = 1'000'000; }, "field 'batch' is 1000000 but epoch 0");
  expect_refused([](Parts& p) { keep_params(p, 0); }, "field 'n_params' is 0");
  expect_refused([&](Parts& p) { keep_params(p, n_params - 1); },
                 "holds " + std::to_string(n_params - 1) +
                     " parameters (field 'n_params') but this run's model has " + std::to_string(n_params));
  // The untouched checkpoint resumes.
  TrainRunOptions resume;
  resume.resume = good;
  auto ok = run_training(parse(base_config(dir + "/resumed_ok", train, dev, 4, extra)), resume);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->first_step, 2);
}

}  // namespace
}  // namespace gpstream::train
