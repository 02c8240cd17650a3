// The decode team (model/transformer_team.cpp): a forward of up to 64 tokens on two threads runs as one
// parallel region with the matrices split by bytes and the threads meeting at a spinning barrier. Its
// logits and K/V rows must be bit for bit those of one thread (which runs no team and splits nothing),
// for every weight type the team's kernels take (F32, F16, BF16, Q8_0, Q4_0, and a model mixing them),
// for each model family's features (q/k/v biases, sandwich norms and soft-caps, sliding windows, fused
// Phi-3 matrices), over prefill, decode, mixed source/target rows, two sequences in one batch, rows
// without logits, and a batch past the team's size (the per-step path on both sides); so must the attention
// tap (source_attention) of every row with logits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/kv_cache.h"
#include "model/quantize_model.h"
#include "tiny_models.h"

namespace gpstream::model {
namespace {

using testing::tiny_config;
using testing::tiny_init;
using testing::tiny_transformer;

// A schedule of batches over two sequences: each entry lists (sequence, group, logits) per row.
struct Row {
  int seq;
  Group group;
  bool logits;
};
const std::vector<std::vector<Row>> kSchedule = {
    {{0, Group::Source, false},
     {0, Group::Source, false},
     {0, Group::Source, false},
     {0, Group::Source, false},
     {0, Group::Source, false},
     {0, Group::Source, true}},                                                        // prefill, 6 rows
    {{0, Group::Target, true}},                                                        // decode
    {{0, Group::Target, true}},                                                        // decode
    {{0, Group::Source, false}, {0, Group::Source, false}, {0, Group::Target, true}},  // read, then re-feed
    {{1, Group::Source, false}, {1, Group::Source, true}, {0, Group::Target, true}},   // two sequences
    {{1, Group::Target, true}, {0, Group::Target, true}},
    {{0, Group::Source, false},
     {1, Group::Source, false},
     {0, Group::Source, false},
     {1, Group::Source, false},
     {0, Group::Source, false},
     {1, Group::Source, false},
     {0, Group::Source, false},
     {1, Group::Source, false},
     {0, Group::Target, true}},  // 9 rows
    {{0, Group::Target, true}, {1, Group::Target, false}, {1, Group::Target, true}},
    {},  // 65 source rows, both sequences, filled in below: past the team's size
};

std::vector<std::vector<Row>> schedule() {
  std::vector<std::vector<Row>> s = kSchedule;
  for (int i = 0; i < 65; ++i) s.back().push_back({i % 2, Group::Source, i >= 63});
  return s;
}

// Runs the schedule on `threads` threads, every row with logits also tapping its attention; returns every
// batch's logits and taps followed by both caches' K/V rows.
std::vector<float> run(const ModelConfig& c, const io::TensorMap& t, int threads) {
  auto tf = tiny_transformer(c, t, threads);
  KvCache cache0(c), cache1(c);
  KvCache* caches[] = {&cache0, &cache1};
  std::vector<float> all, logits;
  int32_t next_id = 3;
  for (const auto& rows : schedule()) {
    Batch b;
    for (const Row& r : rows) {
      KvCache& kc = *caches[r.seq];
      const int n_src = kc.rows(Group::Source) + (r.group == Group::Source ? 1 : 0);
      const int n_tgt = kc.rows(Group::Target) + (r.group == Group::Target ? 1 : 0);
      // Visibility counts rows already in the batch for the same sequence and group.
      int before_src = 0, before_tgt = 0;
      for (const BatchToken& bt : b.tokens)
        if (bt.seq == r.seq) (bt.group == Group::Source ? before_src : before_tgt)++;
      const float pos = r.group == Group::Source ? static_cast<float>(n_src - 1 + before_src)
                                                 : 20.0f + static_cast<float>(n_tgt - 1 + before_tgt);
      b.add({.id = next_id,
             .pos = pos,
             .seq = r.seq,
             .group = r.group,
             .n_src = r.group == Group::Source ? n_src + before_src : kc.rows(Group::Source) + before_src,
             .n_tgt = r.group == Group::Target ? n_tgt + before_tgt : kc.rows(Group::Target) + before_tgt,
             .logits = r.logits,
             .attention = r.logits});
      next_id = (next_id * 7 + 5) % c.n_vocab;
    }
    const Status st = tf->forward(b, std::span<KvCache* const>(caches, 2), logits);
    EXPECT_TRUE(st.ok()) << st.error().message();
    all.insert(all.end(), logits.begin(), logits.end());
    for (int i = 0; i < b.n_logits(); ++i) {
      const std::span<const float> tap = tf->source_attention(i);
      all.insert(all.end(), tap.begin(), tap.end());
    }
  }
  for (KvCache* kc : caches)
    for (Group g : {Group::Source, Group::Target})
      for (int l = 0; l < c.n_layer; ++l) {
        const size_t n = static_cast<size_t>(kc->rows(g) * kc->kv_dim());
        all.insert(all.end(), kc->k(l, g), kc->k(l, g) + n);
        all.insert(all.end(), kc->v(l, g), kc->v(l, g) + n);
      }
  return all;
}

void expect_team_equals_one_thread(const ModelConfig& c, const io::TensorMap& t, const std::string& label) {
  const std::vector<float> one = run(c, t, 1), two = run(c, t, 2);
  ASSERT_EQ(one.size(), two.size()) << label;
  ASSERT_GT(one.size(), 0u) << label;
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << label << ": value " << i;
}

// A Qwen2-like model whose every matrix has whole 32-weight blocks, so Q8_0 / Q4_0 quantize them all.
ModelConfig quantizable_config() {
  ModelConfig c = tiny_config(/*qwen2=*/true, /*tied=*/false, /*llama3_rope=*/false);
  c.n_ff = 64;
  return c;
}

TEST(DecodeTeam, EqualsOneThreadForEveryWeightType) {
  const ModelConfig c = quantizable_config();
  for (io::DType d : {io::DType::F32, io::DType::F16, io::DType::BF16}) {
    const io::TensorMap t = random_tensors(c, tiny_init(41, d));
    expect_team_equals_one_thread(c, t, "dtype " + std::to_string(static_cast<int>(d)));
  }
  const io::TensorMap f32 = random_tensors(c, tiny_init(43));
  expect_team_equals_one_thread(c, convert_model_tensors(c, f32, io::DType::Q8_0), "Q8_0");
  expect_team_equals_one_thread(c, convert_model_tensors(c, f32, io::DType::Q4_0), "Q4_0 (Q8_0 head)");
}

TEST(DecodeTeam, EqualsOneThreadForEachFamily) {
  const ModelConfig qwen = tiny_config(true, true, false), llama = tiny_config(false, false, true);
  const ModelConfig gemma = testing::tiny_gemma2_config(), phi = testing::tiny_phi3_config();
  for (const ModelConfig* c : {&qwen, &llama, &gemma, &phi})
    expect_team_equals_one_thread(*c, random_tensors(*c, tiny_init(47, io::DType::BF16)), c->model_type);
}

}  // namespace
}  // namespace gpstream::model
