// CopyModel: a scripted ForwardModel for stream and eval tests. Its next token is a function of the
// target prefix and the source units the row can see, so re-feeds really change its answer.
#pragma once

#include <string>
#include <vector>

#include "shadow_model.h"
#include "test_codec.h"

namespace gpstream::testing {

using model::Group;

// Translates the visible source words one to one ("stop" ends the translation); answers EOS when it has
// translated everything it can see. With stop_only_before_end, "stop" ends the translation only while the
// source end marker is not visible; once it is, "stop" is skipped and the words after it are translated.
class CopyModel final : public ShadowModel {
 public:
  explicit CopyModel(const CharCodec& codec, bool stop_only_before_end = false)
      : ShadowModel(codec.vocab_size()), codec_(codec), stop_only_before_end_(stop_only_before_end) {}

 private:
  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    // Visible source words (after the prompt), split at word-start tokens.
    std::vector<std::vector<int32_t>> words;
    bool end_visible = false;
    for (int i = 1; i < t.n_src; ++i) {
      int32_t id = sh[0][i];
      if (id == CharCodec::kSourceEnd) {
        end_visible = true;
        continue;
      }
      if (words.empty() || codec_.starts_word(id)) words.emplace_back();
      words.back().push_back(id);
    }
    std::vector<int32_t> translation;
    for (size_t w = 0; w < words.size(); ++w) {
      std::string text = codec_.decode(words[w]);
      if (text.front() == ' ') text.erase(0, 1);
      if (text == "stop") {
        if (stop_only_before_end_ && end_visible) continue;
        break;
      }
      auto ids = codec_.encode(stream::SegmentKind::TargetWord, text, w == 0);
      translation.insert(translation.end(), ids->begin(), ids->end());
    }
    // Target prefix after the 2-token header.
    std::vector<int32_t> prefix(sh[1].begin() + 2, sh[1].begin() + t.n_tgt);
    int32_t next = CharCodec::kEos;
    if (prefix.size() < translation.size()) next = translation[prefix.size()];
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[next] = 10.0f;
    return row;
  }

  const CharCodec& codec_;
  bool stop_only_before_end_;
};

}  // namespace gpstream::testing
