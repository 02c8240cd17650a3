// Checks of one fixture tokenizer (../shared/fixtures/tokenizers/<name>), each defined in the test file of
// its concept and run together by fixture_tokenizers_test.cpp, so each big tokenizer.json is loaded by one
// test process only (ctest runs every test in its own process).
#pragma once

#include <string>

namespace gpstream::tokenizer {

void check_parity(const std::string& name);                             // tokenizer_parity_test.cpp
void check_detokenizer(const std::string& name);                        // detokenizer_test.cpp
void check_word_starts(const std::string& name);                        // detokenizer_test.cpp
void check_segments(const std::string& name, const std::string& tmpl);  // segment_encoder_test.cpp

}  // namespace gpstream::tokenizer
