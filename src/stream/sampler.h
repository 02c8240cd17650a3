// Choosing the next token from a logits row: greedy by default; temperature, top-k, top-p and a
// repetition penalty when asked. The penalty sees only tokens the model generated (never the source
// or the template), and an `allowed` predicate restricts the choice (after a re-feed only a word start
// or the end marker may be chosen, gpe.md §5).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

namespace gpstream::stream {

struct DecodingOptions {
  float temperature = 0.0f;         // 0 = greedy
  int top_k = 0;                    // 0 = off
  float top_p = 1.0f;               // 1 = off
  float repetition_penalty = 1.0f;  // 1 = off (CTRL-style: divide positive logits, multiply negative)
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(DecodingOptions o) : o_(o), rng_(o.seed) {}
  // generated: tokens generated so far in this sentence; allowed(id) false excludes a token.
  int32_t choose(std::span<const float> logits, std::span<const int32_t> generated,
                 const std::function<bool(int32_t)>& allowed);

 private:
  DecodingOptions o_;
  std::mt19937_64 rng_;
  std::vector<float> work_;
  std::vector<int32_t> idx_;
};

}  // namespace gpstream::stream
