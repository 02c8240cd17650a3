// sacreBLEU `NoneTokenizer`: the line unchanged (tokens are then its whitespace-separated words).
#include "eval/tokenizers.h"

namespace gpstream::eval {

std::string tokenize_none(std::string_view line) {
  return std::string(line);
}

}  // namespace gpstream::eval
