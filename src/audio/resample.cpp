// Polyphase windowed-sinc resampler (definition in resample.h). Output sample n sits at input time n M / L;
// its integer part picks the input window and its fractional part p / L (p = n M mod L) picks one of L
// phases. Each phase's taps are computed once into a table when L is modest (the common rates: 44.1 kHz ->
// 16 kHz has L = 160); for awkward rate pairs (L in the thousands) they are computed per output sample by
// the same function, so both paths give identical values.
#include "audio/resample.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

#include "util/memory_budget.h"

namespace gpstream::audio {
namespace {

constexpr size_t kMaxTableEntries = size_t{1} << 21;  // 16 MiB of doubles
// Smaller outputs (a streamed piece, a short file) are not worth reading /proc/meminfo for.
constexpr uint64_t kBudgetCheckFrom = uint64_t{1} << 20;

// Zeroth-order modified Bessel function of the first kind (power series; converges for all x).
double bessel_i0(double x) {
  double sum = 1.0, term = 1.0;
  const double q = x * x / 4.0;
  for (int k = 1; k < 500; ++k) {
    term *= q / (static_cast<double>(k) * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

struct Kernel {
  uint64_t up = 1, down = 1;  // L, M
  double cutoff = 0.5;        // fc, cycles per input sample
  double half_width = 1.0;    // W, input samples
  int64_t first_offset = 0;   // taps cover input k = i + j for j in [first_offset, first_offset + n_taps)
  size_t n_taps = 0;
  double i0_beta = 1.0;

  // Taps of phase p (output time i + p / L), normalised to sum 1.
  void phase_taps(uint64_t p, double* taps) const {
    const double frac = static_cast<double>(p) / static_cast<double>(up);
    double sum = 0.0;
    for (size_t t = 0; t < n_taps; ++t) {
      const double x =
          frac - static_cast<double>(first_offset + static_cast<int64_t>(t));  // output - input time
      double h = 0.0;
      if (std::abs(x) <= half_width) {
        const double arg = 2.0 * cutoff * x;
        const double sinc = arg == 0.0 ? 1.0 : std::sin(std::numbers::pi * arg) / (std::numbers::pi * arg);
        const double r = x / half_width;
        const double window =
            bessel_i0(kResampleKaiserBeta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0_beta;
        h = 2.0 * cutoff * sinc * window;
      }
      taps[t] = h;
      sum += h;
    }
    for (size_t t = 0; t < n_taps; ++t) taps[t] /= sum;
  }
};

}  // namespace

Result<std::vector<float>> resample(std::span<const float> samples, uint32_t from_rate, uint32_t to_rate) {
  if (from_rate == 0 || to_rate == 0) return invalid_argument("resample: sample rates must be positive");
  if (from_rate > kResampleMaxRate || to_rate > kResampleMaxRate)
    return invalid_argument("resample: rate " + std::to_string(std::max(from_rate, to_rate)) +
                            " Hz exceeds the limit of " + std::to_string(kResampleMaxRate) + " Hz");
  if (from_rate == to_rate) return std::vector<float>(samples.begin(), samples.end());

  Kernel k;
  const uint64_t g = std::gcd(from_rate, to_rate);
  k.up = to_rate / g;
  k.down = from_rate / g;
  const uint64_t n_in = samples.size();
  if (n_in > (uint64_t{1} << 40))
    return invalid_argument("resample: input of " + std::to_string(n_in) + " samples is too long");
  k.cutoff = kResampleRolloff * 0.5 * std::min(1.0, static_cast<double>(to_rate) / from_rate);
  k.half_width = kResampleZeroCrossings / (2.0 * k.cutoff);
  const auto reach = static_cast<int64_t>(std::floor(k.half_width));
  // Output time i + frac with frac in [0, 1) needs inputs with |i + frac - k| <= W: k - i in [-reach, reach +
  // 1].
  k.first_offset = -reach;
  k.n_taps = static_cast<size_t>(2 * reach + 2);
  k.i0_beta = bessel_i0(kResampleKaiserBeta);

  // n_in <= 2^40 and L <= 10^6 < 2^20: no overflow.
  const uint64_t n_out = (n_in * k.up + k.down - 1) / k.down;
  if (n_out == 0) return std::vector<float>{};
  const std::string what = "resampling " + std::to_string(n_in) + " samples from " +
                           std::to_string(from_rate) + " Hz to " + std::to_string(to_rate) + " Hz";
  if (n_out > kResampleMaxOutputSamples)
    return out_of_range(what + " would write " + std::to_string(n_out) + " samples (limit " +
                        std::to_string(kResampleMaxOutputSamples) + ")");
  const bool use_table = k.up * k.n_taps <= kMaxTableEntries;
  const uint64_t table_entries = use_table ? k.up * k.n_taps : k.n_taps;
  const uint64_t need = saturating_sum({n_out * sizeof(float), table_entries * sizeof(double)});
  if (need > kBudgetCheckFrom) GPS_TRY(check_memory_budget(need, what));
  std::vector<float> out(n_out);
  std::vector<double> table(table_entries);
  if (use_table)
    for (uint64_t p = 0; p < k.up; ++p) k.phase_taps(p, table.data() + p * k.n_taps);

  for (uint64_t n = 0; n < n_out; ++n) {
    const uint64_t pos = n * k.down;
    const auto base = static_cast<int64_t>(pos / k.up);
    const uint64_t phase = pos % k.up;
    const double* taps = table.data();
    if (use_table) {
      taps += phase * k.n_taps;
    } else {
      k.phase_taps(phase, table.data());
    }
    double acc = 0.0;
    const int64_t first = base + k.first_offset;
    const int64_t lo = std::max<int64_t>(first, 0);
    const int64_t hi = std::min<int64_t>(first + static_cast<int64_t>(k.n_taps), static_cast<int64_t>(n_in));
    for (int64_t i = lo; i < hi; ++i) acc += static_cast<double>(samples[i]) * taps[i - first];
    out[n] = static_cast<float>(acc);
  }
  return out;
}

}  // namespace gpstream::audio
