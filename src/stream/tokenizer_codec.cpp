// SegmentCodec over tokenizer::SegmentEncoder.
#include "stream/tokenizer_codec.h"

namespace gpstream::stream {

Result<std::vector<int32_t>> TokenizerCodec::encode(SegmentKind kind, std::string_view text,
                                                    bool first) const {
  switch (kind) {
    case SegmentKind::Prompt:
      return enc_.encode_prompt();
    case SegmentKind::SourceEnd:
      return enc_.encode_source_end();
    case SegmentKind::Header:
      return enc_.encode_header();
    case SegmentKind::TargetEnd:
      return enc_.encode_target_end();
    case SegmentKind::SourceWord:
      if (text.empty()) return invalid_argument("empty source word");
      return enc_.encode_source_word(text, first);
    case SegmentKind::TargetWord:
      if (text.empty()) return invalid_argument("empty target word");
      return enc_.encode_target_word(text, first);
  }
  return invalid_argument("unknown segment kind");
}

}  // namespace gpstream::stream
