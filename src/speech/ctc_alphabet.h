// The alphabet of the speech encoder's auxiliary CTC head (speech_trainer.h): 0 blank, 1–26 the letters
// a–z (either case), 27 the apostrophe, 28 the space between words. A transcript maps to labels by
// lower-casing ASCII letters, keeping apostrophes, turning everything else into word boundaries, and
// collapsing runs of boundaries (none at either end): "Open it, now!" → o p e n ␣ i t ␣ n o w.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpstream::speech {

inline constexpr int32_t kCtcBlank = 0;
inline constexpr int32_t kCtcAlphabetSize = 29;

std::vector<int32_t> ctc_labels(std::string_view transcript);

}  // namespace gpstream::speech
