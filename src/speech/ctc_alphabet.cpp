// Transcript ↔ CTC labels, greedy decoding (ctc_alphabet.h).
#include "speech/ctc_alphabet.h"

namespace gpstream::speech {

std::vector<int32_t> ctc_labels(std::string_view text) {
  constexpr int32_t kApostrophe = 27, kSpace = 28;
  std::vector<int32_t> out;
  bool pending_space = false;
  for (char ch : text) {
    int32_t label = -1;
    if (ch >= 'a' && ch <= 'z')
      label = 1 + (ch - 'a');
    else if (ch >= 'A' && ch <= 'Z')
      label = 1 + (ch - 'A');
    else if (ch == '\'')
      label = kApostrophe;
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

std::string ctc_text(const std::vector<int32_t>& labels) {
  std::string out;
  for (int32_t l : labels) {
    if (l >= 1 && l <= 26)
      out += static_cast<char>('a' + (l - 1));
    else if (l == 27)
      out += '\'';
    else if (l == 28)
      out += ' ';
  }
  return out;
}

std::vector<int32_t> ctc_greedy_labels(const float* scores, int64_t T) {
  std::vector<int32_t> out;
  int32_t prev = kCtcBlank;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = scores + t * kCtcAlphabetSize;
    int32_t best = 0;
    for (int32_t v = 1; v < kCtcAlphabetSize; ++v)
      if (row[v] > row[best]) best = v;
    if (best != prev && best != kCtcBlank) out.push_back(best);
    prev = best;
  }
  return out;
}

}  // namespace gpstream::speech
