// Per-segment encoding with a real tokenizer.
#include "stream/tokenizer_codec.h"

namespace gpstream::stream {

Result<std::vector<int32_t>> TokenizerCodec::encode(SegmentKind kind, std::string_view text, bool first) const {
  std::vector<int32_t> out;
  tokenizer::EncodeOptions o;
  o.add_special = false;
  o.prefix = false;
  switch (kind) {
    case SegmentKind::Prompt:
      o.prefix = true;
      tok_->encode(tmpl_.prompt, o, out);
      break;
    case SegmentKind::SourceEnd: tok_->encode(tmpl_.source_end, o, out); break;
    case SegmentKind::Header: tok_->encode(tmpl_.header, o, out); break;
    case SegmentKind::TargetEnd: tok_->encode(tmpl_.target_end, o, out); break;
    case SegmentKind::SourceWord:
    case SegmentKind::TargetWord: {
      if (text.empty()) return invalid_argument("empty word");
      std::string w = first ? std::string(text) : " " + std::string(text);
      tok_->encode(w, o, out);
      break;
    }
  }
  return out;
}

std::string TokenizerCodec::decode(std::span<const int32_t> ids) const { return tok_->decode(ids, true); }

}  // namespace gpstream::stream
