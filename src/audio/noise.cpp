// Seeded additive noise. The generator is util/splitmix64.h's, so the bits are the same on every platform and
// standard library (std::normal_distribution is implementation-defined). Gaussians come from the Box-Muller
// transform, uniforms from the top 53 bits.
#include "audio/noise.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <vector>

#include "util/fnv1a.h"
#include "util/splitmix64.h"

namespace gpstream::audio {
namespace {

// SplitMix64 with standard Gaussians (Box-Muller; the second value of each pair is kept for the next call).
class GaussianRng : public SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  double gaussian() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]: log(u1) is finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Separate streams for the draw and for the samples, so the draw does not shift the noise sequence.
constexpr uint64_t kDrawStream = 0x6472617700000000ull;    // "draw"
constexpr uint64_t kSampleStream = 0x73616d7000000000ull;  // "samp"
// Offsets that keep the epoch and the utterance key apart before each is folded into the seed (two unrelated
// odd 64-bit constants; changing either changes every augmented sample).
constexpr uint64_t kEpochOffset = 0x632BE59BD9B4E019ull;
constexpr uint64_t kUtteranceOffset = 0x85EBCA77C2B2AE63ull;

}  // namespace

Status validate_noise_options(const NoiseOptions& o) {
  const auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (!in(o.snr_min_db, -30.0, 100.0) || !in(o.snr_max_db, -30.0, 100.0))
    return invalid_argument("noise SNR range [" + std::to_string(o.snr_min_db) + ", " +
                            std::to_string(o.snr_max_db) +
                            "] dB: bounds must be finite and within [-30, 100]");
  if (o.snr_min_db > o.snr_max_db)
    return invalid_argument("noise SNR range: minimum " + std::to_string(o.snr_min_db) +
                            " dB above maximum " + std::to_string(o.snr_max_db) + " dB");
  if (!in(o.pink_fraction, 0.0, 1.0)) return invalid_argument("noise pink fraction must be within [0, 1]");
  if (!in(o.clean_fraction, 0.0, 1.0)) return invalid_argument("noise clean fraction must be within [0, 1]");
  return {};
}

uint64_t noise_seed(uint64_t base_seed, uint64_t epoch, uint64_t utterance_key) {
  uint64_t h = splitmix64_mix(base_seed);
  h = splitmix64_finalize(h ^ (epoch + kEpochOffset));
  return splitmix64_finalize(h ^ (utterance_key + kUtteranceOffset));
}

uint64_t noise_utterance_key(std::span<const char> name) {
  return fnv1a(name);
}

NoiseDraw draw_noise(const NoiseOptions& o, uint64_t seed) {
  GaussianRng rng(seed ^ kDrawStream);
  NoiseDraw d;
  // All three values are drawn every time, so each depends on the seed alone, not on the other options.
  const double u_clean = rng.uniform(), u_color = rng.uniform(), u_snr = rng.uniform();
  d.clean = u_clean < o.clean_fraction;
  d.color = u_color < o.pink_fraction ? NoiseColor::Pink : NoiseColor::White;
  d.snr_db = o.snr_min_db + u_snr * (o.snr_max_db - o.snr_min_db);
  return d;
}

void generate_noise(NoiseColor color, uint64_t seed, std::span<float> out) {
  GaussianRng rng(seed ^ kSampleStream);
  if (color == NoiseColor::White) {
    for (float& x : out) x = static_cast<float>(rng.gaussian());
    return;
  }
  double rows[kPinkNoiseRows];
  double sum = 0.0;
  for (double& r : rows) sum += (r = rng.gaussian());
  const double scale = 1.0 / std::sqrt(kPinkNoiseRows + 1.0);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0) {
      const int row = std::countr_zero(i);
      if (row < kPinkNoiseRows) {
        const double fresh = rng.gaussian();
        sum += fresh - rows[row];
        rows[row] = fresh;
      }
    }
    out[i] = static_cast<float>((sum + rng.gaussian()) * scale);
  }
}

Result<NoiseDraw> add_noise(std::span<float> samples, const NoiseOptions& options, uint64_t seed) {
  GPS_TRY(validate_noise_options(options));
  NoiseDraw d = draw_noise(options, seed);
  if (d.clean || samples.empty()) return d;
  double signal_power = 0.0;
  for (float s : samples) signal_power += static_cast<double>(s) * s;
  signal_power /= static_cast<double>(samples.size());
  if (!(signal_power > 0.0)) {  // silence: no SNR is defined
    d.clean = true;
    return d;
  }
  std::vector<float> noise(samples.size());
  generate_noise(d.color, seed, noise);
  double noise_power = 0.0;
  for (float n : noise) noise_power += static_cast<double>(n) * n;
  noise_power /= static_cast<double>(noise.size());
  if (!(noise_power > 0.0)) {  // cannot happen for Gaussian samples, but never divide by zero
    d.clean = true;
    return d;
  }
  const double gain = std::sqrt(signal_power / (noise_power * std::pow(10.0, d.snr_db / 10.0)));
  for (size_t i = 0; i < samples.size(); ++i)
    samples[i] = static_cast<float>(static_cast<double>(samples[i]) + gain * noise[i]);
  return d;
}

}  // namespace gpstream::audio
