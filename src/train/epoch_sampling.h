// The random draws of the training data, shared by the text and the speech trainer: each epoch's order of the
// examples (a seeded shuffle per epoch), wait-k and other per-example choices drawn per (epoch, example), and
// the named salts that keep a run's seeded streams apart. Every draw is a pure function of the seed and the
// counters, so a data position (epoch, index within the epoch) is all a resumed run needs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace gpstream::train {

// Salts xor-ed into a run's seed (then mixed, run_folder.h mix_seed) for its independent random streams.
inline constexpr uint64_t kScratchInitSalt = 0x1111;        // a scratch model's random weights
inline constexpr uint64_t kTrainModelSalt = 0x2222;         // TrainModel's own stream (LoRA initialisation)
inline constexpr uint64_t kSpeechEncoderInitSalt = 0x3333;  // the speech encoder's random weights
inline constexpr uint64_t kCtcHeadInitSalt = 0x4444;        // the speech CTC head's random weights
inline constexpr uint64_t kPhiDrawSalt = 0x9A9A;  // the target start φ drawn per utterance (speech)

// The stride between the epochs' shuffle seeds: epoch e's stream starts at mix_seed(seed + stride · (e + 1)).
inline constexpr uint64_t kEpochSeedStride = 0x51ED2701u;
// The stride between the epochs' per-example draws (the 64-bit FNV prime): item_draw mixes
// epoch · stride + item.
inline constexpr uint64_t kItemDrawEpochStride = 0x100000001b3ull;

// One epoch's random stream. Its first use is the epoch's order of the examples; a trainer may draw more from
// it after that (the text dataset shuffles its batches with it).
class EpochShuffle {
 public:
  EpochShuffle(uint64_t seed, int64_t epoch);
  // A permutation of 0 .. n-1: every index once.
  std::vector<size_t> order(size_t n);
  // Shuffles `items` with the stream's next draws.
  template <class T>
  void shuffle(std::vector<T>& items) {
    std::shuffle(items.begin(), items.end(), rng_);
  }

 private:
  std::mt19937_64 rng_;
};

// A 64-bit draw for example `item` in `epoch` (epoch -1: the fixed draw of dev sets).
uint64_t item_draw(uint64_t seed, int64_t epoch, size_t item);
// Wait-k drawn uniformly from [k_min, k_max] for example `item` in `epoch` (k_min when they are equal).
int sample_k(uint64_t seed, int64_t epoch, size_t item, int k_min, int k_max);

}  // namespace gpstream::train
