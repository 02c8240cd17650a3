// The alphabet of the speech encoder's auxiliary CTC head (speech_trainer.h), and greedy decoding with it:
// 0 blank, 1–26 the letters a–z (either case), 27 the apostrophe, 28 the space between words. A transcript
// maps to labels by lower-casing ASCII letters, keeping apostrophes, turning everything else into word
// boundaries, and collapsing runs of boundaries (none at either end): "Open it, now!" → o p e n ␣ i t ␣ n o
// w.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream::speech {

inline constexpr int32_t kCtcBlank = 0;
inline constexpr int32_t kCtcAlphabetSize = 29;

std::vector<int32_t> ctc_labels(std::string_view transcript);

// Labels back to text: letters in lower case, the apostrophe, a space for each boundary (labels outside
// 1..28, blanks included, are skipped).
std::string ctc_text(const std::vector<int32_t>& labels);

// Greedy (best-path) decoding of T frames of V = kCtcAlphabetSize scores (row t at scores + t * V): each
// frame's best label (the lowest on ties), runs of one label merged, blanks dropped.
std::vector<int32_t> ctc_greedy_labels(const float* scores, int64_t T);

}  // namespace gpstream::speech
