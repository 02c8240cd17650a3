// Transcript → CTC labels (ctc_alphabet.h).
#include "speech/ctc_alphabet.h"

namespace gpstream::speech {

std::vector<int32_t> ctc_labels(std::string_view text) {
  constexpr int32_t kApostrophe = 27, kSpace = 28;
  std::vector<int32_t> out;
  bool pending_space = false;
  for (char ch : text) {
    int32_t label = -1;
    if (ch >= 'a' && ch <= 'z') label = 1 + (ch - 'a');
    else if (ch >= 'A' && ch <= 'Z') label = 1 + (ch - 'A');
    else if (ch == '\'') label = kApostrophe;
    if (label < 0) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(kSpace);
    pending_space = false;
    out.push_back(label);
  }
  return out;
}

}  // namespace gpstream::speech
