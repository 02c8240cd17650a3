// CopyModel: a scripted ForwardModel for stream and eval tests. Its next token is a function of the
// target prefix and the source units the row can see, so re-feeds really change its answer.
#pragma once

#include <array>
#include <map>

#include "model/forward_model.h"
#include "test_codec.h"

namespace gpstream::testing {

using model::Group;

// Translates the visible source words one to one ("stop" ends the translation); answers EOS when it has
// translated everything it can see. With stop_only_before_end, "stop" ends the translation only while the
// source end marker is not visible; once it is, "stop" is skipped and the words after it are translated.
class CopyModel final : public model::ForwardModel {
 public:
  explicit CopyModel(const CharCodec& codec, bool stop_only_before_end = false)
      : codec_(codec), stop_only_before_end_(stop_only_before_end) {
    config_.n_vocab = codec.vocab_size();
    config_.n_embd = config_.n_ff = config_.n_layer = config_.n_head = config_.n_head_kv = 1;
    config_.head_dim = 2;
    rope_ = model::RopeFrequencies::plain({1.0f}, 2);
  }
  const model::ModelConfig& config() const override { return config_; }
  const model::RopeFrequencies& rope() const override { return rope_; }
  Status forward(const model::Batch& b, std::span<model::KvCache* const> caches, std::vector<float>& logits) override {
    logits.clear();
    for (const auto& t : b.tokens) {
      model::KvCache& c = *caches[t.seq];
      auto& sh = shadow_[&c];
      for (int g = 0; g < 2; ++g) sh[g].resize(c.rows(static_cast<Group>(g)));
      GPS_TRY(c.reserve(t.group, 1));
      c.push_row(t.group, t.pos);
      sh[static_cast<int>(t.group)].push_back(t.id);
      if (!t.logits) continue;
      // Visible source words (after the prompt), split at word-start tokens.
      std::vector<std::vector<int32_t>> words;
      bool end_visible = false;
      for (int i = 1; i < t.n_src; ++i) {
        int32_t id = sh[0][i];
        if (id == CharCodec::kSourceEnd) { end_visible = true; continue; }
        if (words.empty() || codec_.starts_word(id)) words.emplace_back();
        words.back().push_back(id);
      }
      std::vector<int32_t> translation;
      bool stop = false;
      for (size_t w = 0; w < words.size() && !stop; ++w) {
        std::string text = codec_.decode(words[w]);
        if (text.front() == ' ') text.erase(0, 1);
        if (text == "stop") {
          if (stop_only_before_end_ && end_visible) continue;
          stop = true;
          break;
        }
        auto ids = codec_.encode(stream::SegmentKind::TargetWord, text, w == 0);
        translation.insert(translation.end(), ids->begin(), ids->end());
      }
      // Target prefix after the 2-token header.
      std::vector<int32_t> prefix(sh[1].begin() + 2, sh[1].begin() + t.n_tgt);
      int32_t next = CharCodec::kEos;
      if (prefix.size() < translation.size()) next = translation[prefix.size()];
      std::vector<float> row(config_.n_vocab, 0.0f);
      row[next] = 10.0f;
      logits.insert(logits.end(), row.begin(), row.end());
    }
    return {};
  }

 private:
  const CharCodec& codec_;
  bool stop_only_before_end_;
  model::ModelConfig config_;
  model::RopeFrequencies rope_;
  std::map<const model::KvCache*, std::array<std::vector<int32_t>, 2>> shadow_;
};

}  // namespace gpstream::testing
