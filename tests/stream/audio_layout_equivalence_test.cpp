// gpe.md §8 invariants with audio sources (source units = chunks of input embedding rows, wait-k counted in
// chunks) on tiny random transformers of every family:
//  1. train/infer equivalence: a forced Session fed chunk by chunk has the row logits and cached K/V of one
//     full forward over the audio layout (within forward_order_bound: invariant_helpers.h), for group,
//     batch-stream, interleaved and interleaved-blocked; the layout of a small case is also checked against
//     a hand derivation;
//  2. chunk wait-k with k ≥ M + 1 gives offline's tokens for every paradigm;
//  3. forward counts: each audio row once, each target token once plus one re-feed per boundary with a read.
// Delays are in chunks (word j after min(k + j − 1, M) chunks) and delay_ms sums the read chunks' durations.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

#include "invariant_helpers.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using model::Group;
using stream::Paradigm;
using testing::CharCodec;

// An audio source: chunk i holds rows[i] (n_embd floats each) and lasts duration_ms[i].
struct Audio {
  std::vector<int> chunk_rows;
  std::vector<float> rows;  // all chunks' rows concatenated
  std::vector<double> duration_ms;
  int width = 0;

  std::span<const float> chunk(size_t i) const {
    size_t first = 0;
    for (size_t c = 0; c < i; ++c) first += static_cast<size_t>(chunk_rows[c]);
    return std::span<const float>(rows).subspan(first * width, static_cast<size_t>(chunk_rows[i]) * width);
  }
};

Audio random_audio(const std::vector<int>& chunk_rows, int width, uint32_t seed) {
  Audio a;
  a.chunk_rows = chunk_rows;
  a.width = width;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);  // the scale of the tiny models' embedding tables
  int total = 0;
  for (size_t i = 0; i < chunk_rows.size(); ++i) {
    total += chunk_rows[i];
    a.duration_ms.push_back(40.0 * static_cast<double>(i + 1));  // distinct, so sums identify the chunks
  }
  a.rows.resize(static_cast<size_t>(total) * width);
  for (float& v : a.rows) v = normal(rng);
  return a;
}

struct LiveOutput {
  std::vector<std::string> words;
  std::vector<int> delays;
  std::vector<double> delay_ms;
};

// Steps a session, pushing one chunk per NeedSource (then end_source), until Finished.
LiveOutput run_audio(stream::Session& s, const Audio& audio) {
  LiveOutput out;
  size_t pushed = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto e = s.step();
    EXPECT_TRUE(e.ok()) << e.error().message();
    if (!e.ok()) break;
    if (e->kind == stream::EventKind::NeedSource) {
      if (pushed < audio.chunk_rows.size()) {
        const Status st =
            s.push_source_embeddings(audio.chunk(pushed), audio.width, audio.duration_ms[pushed]);
        EXPECT_TRUE(st.ok()) << st.error().message();
        ++pushed;
      } else {
        EXPECT_TRUE(s.end_source().ok());
      }
    } else if (e->kind == stream::EventKind::Word) {
      out.words.push_back(e->word);
      out.delays.push_back(e->delay);
      out.delay_ms.push_back(e->delay_ms);
    } else if (e->kind == stream::EventKind::Finished) {
      break;
    }
  }
  return out;
}

// The layout of group, k = 1, φ = 0, chunks of 2 and 1 rows, target "ab", derived by hand (gpe.md §4–§5):
// prompt <p> at 0; wait-1 reads chunk 0 (rows at 1, 2); header at φ + 0, φ + 1 seeing 3 source rows;
// 'a' then 'b' at 2, 3; the word ends (EOS) with 1 chunk read, the next word needs 2: 'b' is popped,
// chunk 1's row enters at 3 and 'b' is re-fed seeing 4 source rows; it predicts EOS again, and with
// 2 = min(k + 1, M + 1) units read the policy writes: the end marker is never read.
TEST(AudioLayout, SmallGroupLayoutMatchesAHandDerivation) {
  CharCodec codec;
  const std::vector<int> chunks = {2, 1};
  stream::LayoutOptions lo{Paradigm::Group, 1, stream::Phi{0.0f, false}, codec.vocab_size()};
  auto layout = stream::make_layout(codec, chunks, "ab", lo);
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  const int32_t a = codec.char_id('a', false), b = codec.char_id('b', false), eos = CharCodec::kEos;
  const int32_t h1 = CharCodec::kHeader1, h2 = CharCodec::kHeader2, p = CharCodec::kPrompt;
  const auto S = Group::Source, T = Group::Target;
  struct Want {
    int32_t id, embedding;
    float pos;
    Group group;
    int n_src, n_tgt;
    int32_t label;
  };
  const std::vector<Want> want = {
      {p, -1, 0, S, 1, 0, -1}, {-1, 0, 1, S, 2, 0, -1}, {-1, 1, 2, S, 3, 0, -1}, {h1, -1, 0, T, 3, 1, -1},
      {h2, -1, 1, T, 3, 2, a}, {a, -1, 2, T, 3, 3, b},  {-1, 2, 3, S, 4, 0, -1}, {b, -1, 3, T, 4, 4, eos},
  };
  ASSERT_EQ(layout->rows.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const auto& r = layout->rows[i];
    EXPECT_EQ(r.id, want[i].id);
    EXPECT_EQ(r.embedding, want[i].embedding);
    EXPECT_EQ(r.pos, want[i].pos);
    EXPECT_EQ(r.group, want[i].group);
    EXPECT_EQ(r.n_src, want[i].n_src);
    EXPECT_EQ(r.n_tgt, want[i].n_tgt);
    EXPECT_EQ(r.label, want[i].label);
  }
  EXPECT_EQ(layout->delays, std::vector<int>{1});
  EXPECT_EQ(layout->n_source_rows, 4);
  EXPECT_EQ(layout->n_target_rows, 4);
  EXPECT_EQ(layout->n_embedding_rows, 3);

  // to_batch: audio rows read the given buffer; a buffer of the wrong size is refused.
  const std::vector<float> rows = {1, 2, 3, 4, 5, 6};  // 3 rows of width 2
  auto batch = layout->to_batch(rows, 2);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->embeddings, rows);
  EXPECT_EQ(batch->embedding_width, 2);
  EXPECT_EQ(batch->tokens[6].embedding, 2);
  EXPECT_FALSE(layout->to_batch(std::vector<float>(5), 2).ok());
  EXPECT_FALSE(layout->to_batch(rows, 3).ok());
  EXPECT_FALSE(layout->to_batch({}, 0).ok());
  // Chunks must have rows.
  EXPECT_FALSE(stream::make_layout(codec, std::vector<int>{2, 0}, "ab", lo).ok());
  EXPECT_FALSE(stream::make_layout(codec, std::vector<int>{1 << 30}, "ab", lo).ok());
}

struct Case {
  std::vector<int> chunk_rows;
  std::string target;
  int k;
};

class AudioEquivalence : public ::testing::TestWithParam<std::tuple<Paradigm, std::string>> {};

TEST_P(AudioEquivalence, ForcedSessionMatchesFullForwardOverLayout) {
  const Paradigm paradigm = std::get<0>(GetParam());
  const auto cfg = testing::family_config(std::get<1>(GetParam()));
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(21)), 2);
  CharCodec codec;
  const std::vector<Case> cases = {
      {{2, 1, 3, 2}, "bonjour le grand monde .", 1},
      {{2, 1, 3, 2}, "bonjour le grand monde .", 2},
      {{2, 1, 3, 2}, "bonjour le grand monde .", 5},  // k = M + 1
      {{1, 2}, "a b c d e f g h i", 2},               // N > M + k
      {{3, 1, 2}, "x", 7},                            // M < k
      {{1, 1, 2, 1, 1, 3, 1}, "un deux", 1},          // N + k < M: EOS before the end marker
      {{4}, "je suis", 1},
  };
  uint32_t seed = 100;
  for (const auto& c : cases)
    for (stream::Phi phi : {stream::Phi{0.0f, false}, stream::Phi{0.5f, false}, stream::Phi{0.0f, true}})
      for (bool end_after_source : {false, true}) {
        SCOPED_TRACE(c.target + " | M=" + std::to_string(c.chunk_rows.size()) + " k=" + std::to_string(c.k) +
                     " phi=" + phi.to_string() + (end_after_source ? " end after source" : ""));
        const Audio audio = random_audio(c.chunk_rows, cfg.n_embd, ++seed);
        stream::LayoutOptions lo{paradigm, c.k, phi, cfg.n_vocab, end_after_source};
        auto layout = stream::make_layout(codec, c.chunk_rows, c.target, lo);
        ASSERT_TRUE(layout.ok()) << layout.error().message();
        // The layout holds the chunks read (all but those after an early EOS), in chunk order: audio row
        // indices count up in arrival order over a prefix of the chunks.
        int read_rows = 0, next = 0;
        for (size_t i = 0; i < c.chunk_rows.size() && read_rows < layout->n_embedding_rows; ++i)
          read_rows += c.chunk_rows[i];
        ASSERT_EQ(layout->n_embedding_rows, read_rows);
        for (const auto& r : layout->rows)
          if (r.embedding >= 0) {
            EXPECT_EQ(r.embedding, next++);
          }
        if (end_after_source) {
          // Every chunk is read, and the row that predicts the end marker sees all of them and the end
          // marker.
          int all_rows = 0;
          for (int n : c.chunk_rows) all_rows += n;
          EXPECT_EQ(layout->n_embedding_rows, all_rows);
          int eos_rows = 0;
          for (const auto& r : layout->rows)
            if (r.label == CharCodec::kEos) {
              ++eos_rows;
              EXPECT_EQ(r.n_src, layout->n_source_rows);
            }
          EXPECT_EQ(eos_rows, 1);
        }
        auto batch = layout->to_batch(
            std::span<const float>(audio.rows).first(static_cast<size_t>(read_rows) * cfg.n_embd),
            cfg.n_embd);
        ASSERT_TRUE(batch.ok()) << batch.error().message();
        model::KvCache full_cache(cfg);
        std::vector<float> full;
        ASSERT_TRUE(tf->forward(*batch, full_cache, full).ok());

        testing::Recorder rec(*tf);
        stream::SessionOptions so;
        so.paradigm = paradigm;
        so.k = c.k;
        so.phi = phi;
        so.end_after_source = end_after_source;
        so.forced_target = testing::forced_target(*layout, CharCodec::kEos);
        auto session = stream::Session::create(rec, codec, so);
        ASSERT_TRUE(session.ok());
        const LiveOutput out = run_audio(**session, audio);
        ASSERT_TRUE((*session)->finished());
        EXPECT_EQ(out.delays, layout->delays);
        // Delays in chunks follow wait-k; delay_ms is the duration of the chunks read.
        const int M = static_cast<int>(c.chunk_rows.size());
        for (size_t j = 0; j < out.delays.size(); ++j) {
          EXPECT_EQ(out.delays[j], std::min<int>(c.k + static_cast<int>(j), M));
          double ms = 0;
          for (int i = 0; i < out.delays[j]; ++i) ms += audio.duration_ms[i];
          EXPECT_EQ(out.delay_ms[j], ms);
        }

        testing::expect_session_matches_full_forward(*layout, full_cache, full, (*session)->cache(), rec, cfg,
                                                     tf->weights());
        // §8.3: every audio row forwarded exactly once, target rows once plus the re-feeds.
        // With end_after_source every end marker chosen before the end marker is read reads one more unit and
        // re-feeds once more: M + 1 − min(k + N, M + 1) re-feeds beyond wait-k's.
        const int N = static_cast<int>(out.delays.size());
        const int extra = end_after_source ? M + 1 - std::min(c.k + N, M + 1) : 0;
        testing::expect_forward_counts(*layout, rec, **session, M, N, c.k, extra);
        EXPECT_EQ(rec.embedding_rows, layout->n_embedding_rows);
      }
}

INSTANTIATE_TEST_SUITE_P(Paradigms, AudioEquivalence,
                         ::testing::Combine(::testing::Values(Paradigm::Group, Paradigm::BatchStream,
                                                              Paradigm::Interleaved,
                                                              Paradigm::InterleavedBlocked),
                                            ::testing::Values("llama", "gemma2", "phi3")),
                         [](const auto& info) {
                           std::string n = stream::paradigm_name(std::get<0>(info.param));
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n + "_" + std::get<1>(info.param);
                         });

class AudioOfflineEquality : public ::testing::TestWithParam<std::string> {};

// gpe.md §8.2 with audio: chunk wait-k with k ≥ M + 1 writes offline's words in every paradigm (windows of
// 64 for Gemma 2 / Phi-3, past the sentence: reencode's single causal sequence counts one window over all
// rows, docs/models.md).
TEST_P(AudioOfflineEquality, ReadingEveryChunkFirstGivesOfflineWords) {
  CharCodec codec;
  const std::string family = GetParam();
  auto cfg = family == "gemma2" ? testing::tiny_gemma2_config(64)
             : family == "phi3" ? testing::tiny_phi3_config(64)
                                : testing::tiny_config(true, true, false);
  cfg.n_vocab = codec.vocab_size();  // every id decodes, so random models write words
  const Audio audio = random_audio({3, 1, 2, 2, 1}, cfg.n_embd, 7);
  const int M = static_cast<int>(audio.chunk_rows.size());
  std::unique_ptr<model::Transformer> tf;
  auto run = [&](Paradigm p, int k, stream::Phi phi) {
    stream::SessionOptions so;
    so.paradigm = p;
    so.k = k;
    so.phi = phi;
    so.max_target_tokens = 14;
    auto s = stream::Session::create(*tf, codec, so);
    EXPECT_TRUE(s.ok());
    std::string words;
    for (const auto& w : run_audio(**s, audio).words) words += w + " ";
    return words;
  };
  const stream::Phi S{0.0f, true};
  // A random model may end at once; take the first seed whose offline output has words.
  std::string offline;
  for (uint64_t seed = 5; seed < 40 && offline.empty(); ++seed) {
    tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(seed)), 1);
    offline = run(Paradigm::Offline, 1, S);
  }
  ASSERT_FALSE(offline.empty());
  for (Paradigm p : {Paradigm::Group, Paradigm::BatchStream, Paradigm::ReencodePos, Paradigm::Reencode,
                     Paradigm::Interleaved, Paradigm::InterleavedBlocked})
    for (int k : {M + 1, M + 4}) EXPECT_EQ(run(p, k, S), offline) << stream::paradigm_name(p) << " k=" << k;
  EXPECT_EQ(run(Paradigm::Group, M + 1, stream::Phi{0.0f, false}),
            run(Paradigm::Offline, 1, stream::Phi{0.0f, false}));
}

INSTANTIATE_TEST_SUITE_P(Families, AudioOfflineEquality, ::testing::Values("qwen2", "gemma2", "phi3"));

}  // namespace
}  // namespace gpstream
