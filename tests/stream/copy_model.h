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
// The source words a row sees (after the prompt; the end marker left out), split at word starts, and whether
// it sees the end marker.
struct VisibleSource {
  std::vector<std::vector<int32_t>> words;
  bool end_visible = false;
};
inline VisibleSource visible_source(const CharCodec& codec, const ShadowModel::Rows& sh,
                                    const model::BatchToken& t) {
  VisibleSource v;
  for (int i = 1; i < t.n_src; ++i) {
    const int32_t id = sh[0][i];
    if (id == CharCodec::kSourceEnd) {
      v.end_visible = true;
      continue;
    }
    if (v.words.empty() || codec.starts_word(id)) v.words.emplace_back();
    v.words.back().push_back(id);
  }
  return v;
}

// A source word's text without its leading space.
inline std::string word_text(const CharCodec& codec, const std::vector<int32_t>& ids) {
  std::string text = codec.decode(ids);
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

// Appends the target ids of `text` as the target's word number `index` (from 0).
inline void append_target_word(const CharCodec& codec, const std::string& text, size_t index,
                               std::vector<int32_t>& out) {
  auto ids = codec.encode(stream::SegmentKind::TargetWord, text, index == 0);
  out.insert(out.end(), ids->begin(), ids->end());
}

// The next token of a target that copies `translation` after the 2-token header: its next id, or EOS.
inline int32_t next_copied_token(const model::BatchToken& t, const std::vector<int32_t>& translation) {
  const size_t written = static_cast<size_t>(t.n_tgt) - 2;
  return written < translation.size() ? translation[written] : CharCodec::kEos;
}

class CopyModel final : public ShadowModel {
 public:
  explicit CopyModel(const CharCodec& codec, bool stop_only_before_end = false)
      : ShadowModel(codec.vocab_size()), codec_(codec), stop_only_before_end_(stop_only_before_end) {}

 private:
  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    const VisibleSource src = visible_source(codec_, sh, t);
    std::vector<int32_t> translation;
    for (size_t w = 0; w < src.words.size(); ++w) {
      const std::string text = word_text(codec_, src.words[w]);
      if (text == "stop") {
        if (stop_only_before_end_ && src.end_visible) continue;
        break;
      }
      append_target_word(codec_, text, w, translation);
    }
    const int32_t next = next_copied_token(t, translation);
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[next] = 10.0f;
    return row;
  }

  const CharCodec& codec_;
  bool stop_only_before_end_;
};

}  // namespace gpstream::testing
