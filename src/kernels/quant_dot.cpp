// Quantized dot products: AVX2 micro-kernels of R weight rows × C activation rows (R*C accumulators,
// one weight block and one activation block loaded once per block step), the kernels of Q8_0 / Q4_0 rows
// interleaved in groups of eight, and their scalar twins.
#include "kernels/quant_dot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/half.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define GPS_QUANT_AVX2 1
#endif

namespace gpstream::kernels {
namespace {

// Activation rows per multi-token kernel call (four weight rows each).
constexpr int kQuantTileC = 3;

inline float load_scale(const uint8_t* block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return f16_to_f32(h);
}

// Block i of a row of type T: the 32 weights as int8 (Q4_0 nibbles minus 8), scalar path.
template <WeightType T>
inline void unpack_block(const uint8_t* block, int8_t* q) {
  if constexpr (T == WeightType::Q8_0) {
    std::memcpy(q, block + 2, 32);
  } else {
    for (int j = 0; j < 16; ++j) {
      q[j] = static_cast<int8_t>((block[2 + j] & 0x0f) - 8);
      q[j + 16] = static_cast<int8_t>((block[2 + j] >> 4) - 8);
    }
  }
}

template <WeightType T>
constexpr size_t block_bytes() {
  return T == WeightType::Q8_0 ? kQ8_0Bytes : kQ4_0Bytes;
}

template <WeightType T>
float dot_scalar(const uint8_t* w, const BlockQ8_0* x, int64_t nb) {
  float sum = 0.0f;
  int8_t q[32];
  for (int64_t b = 0; b < nb; ++b, w += block_bytes<T>()) {
    unpack_block<T>(w, q);
    int32_t s = 0;
    for (int j = 0; j < 32; ++j) s += int32_t{q[j]} * int32_t{x[b].qs[j]};
    sum += load_scale(w) * f16_to_f32(x[b].d) * static_cast<float>(s);
  }
  return sum;
}

// The same over split activations (QuantizedActivations): quants xq[b * 32 + j], scale dx[b].
template <WeightType T>
float dot_scalar_split(const uint8_t* w, const int8_t* xq, const float* dx, int64_t nb) {
  float sum = 0.0f;
  int8_t q[32];
  for (int64_t b = 0; b < nb; ++b, w += block_bytes<T>()) {
    unpack_block<T>(w, q);
    int32_t s = 0;
    for (int j = 0; j < 32; ++j) s += int32_t{q[j]} * int32_t{xq[b * 32 + j]};
    sum += load_scale(w) * dx[b] * static_cast<float>(s);
  }
  return sum;
}

// An interleaved block (quant_dot.h) holds eight rows: 16 bytes of scales, then 32-byte vectors (4 for Q4_0,
// 8 for Q8_0).
template <WeightType T>
constexpr size_t interleaved_block_bytes() {
  return kInterleaveRows * block_bytes<T>();
}

// Where quant byte j of row r's block (Q4_0: nibble byte 0-15; Q8_0: quant 0-31) lies in an interleaved
// block.
constexpr size_t interleaved_quant_offset(int r, int j) {
  return 16 + 32 * (j / 4) + 4 * r + j % 4;
}

#ifndef GPS_QUANT_AVX2

// Row r of an interleaved block as a plain block (scale, then the quant bytes).
template <WeightType T>
inline void deinterleave_block(const uint8_t* blk, int r, uint8_t* plain) {
  std::memcpy(plain, blk + 2 * r, 2);
  for (int j = 0; j < static_cast<int>(block_bytes<T>()) - 2; ++j)
    plain[2 + j] = blk[interleaved_quant_offset(r, j)];
}

#endif

#ifdef GPS_QUANT_AVX2

inline float hsum(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// A weight block as maddubs's unsigned first operand. Q8_0: |w|, and `raw` keeps w so the activations can
// take its sign (|w| <= 128 and |x| <= 127: a pair sum stays below 2^15). Q4_0: the nibbles 0..15 as they
// are; the -8 offset is corrected with the activation block's sum (block_dot).
template <WeightType T>
inline __m256i unsigned_weights(const uint8_t* block, __m256i& raw) {
  if constexpr (T == WeightType::Q8_0) {
    raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    return _mm256_sign_epi8(raw, raw);
  } else {
    // The 16 bytes in both halves; the high half shifted right by 4 bits (a 32-bit shift carries the next
    // byte's low nibble into each byte's high nibble, which the mask drops) → low nibbles in lanes 0-15,
    // high nibbles in lanes 16-31.
    raw = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2)));
    raw = _mm256_srlv_epi32(raw, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
    return _mm256_and_si256(raw, _mm256_set1_epi8(0x0f));
  }
}

// Eight int32 lanes whose sum is the integer dot product of one weight block and one activation block,
// for Q4_0 with the unsigned nibbles (the -8 offset not yet applied).
template <WeightType T>
inline __m256i block_dot_unsigned(__m256i wu, __m256i raw, const int8_t* xq) {
  const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq));
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (T == WeightType::Q8_0) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(wu, _mm256_sign_epi8(x, raw)), ones);
  } else {
    (void)raw;
    return _mm256_madd_epi16(_mm256_maddubs_epi16(wu, x), ones);
  }
}

// Eight int32 lanes whose sum is the exact integer dot product of one weight block and one activation block.
template <WeightType T>
inline __m256i block_dot(__m256i wu, __m256i raw, const int8_t* xq, int32_t xsum) {
  const __m256i p = block_dot_unsigned<T>(wu, raw, xq);
  if constexpr (T == WeightType::Q8_0) return p;
  // sum (n - 8) x = sum n x - 8 sum x; subtracting sum x from each of the eight lanes removes 8 sum x.
  return _mm256_sub_epi32(p, _mm256_set1_epi32(xsum));
}

// A block's fp16 scale as eight fp32 copies (broadcast as 16 bits, then widened).
inline __m256 weight_scale(const uint8_t* block) {
  int16_t h;
  std::memcpy(&h, block, 2);
  return _mm256_cvtph_ps(_mm_set1_epi16(h));
}

template <WeightType T>
inline __m256 row_dot_step(const uint8_t* w, const int8_t* xq, const float* dx, const int32_t* sx, int64_t b,
                           __m256 acc) {
  const uint8_t* wb = w + static_cast<size_t>(b) * block_bytes<T>();
  __m256i raw;
  const __m256i wu = unsigned_weights<T>(wb, raw);
  const __m256 d = _mm256_mul_ps(weight_scale(wb), _mm256_set1_ps(dx[b]));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(block_dot<T>(wu, raw, xq + b * 32, sx[b])), d, acc);
}

template <WeightType T>
float row_dot(const uint8_t* w, const int8_t* xq, const float* dx, const int32_t* sx, int64_t nb) {
  __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    even = row_dot_step<T>(w, xq, dx, sx, b, even);
    odd = row_dot_step<T>(w, xq, dx, sx, b + 1, odd);
  }
  if (b < nb) even = row_dot_step<T>(w, xq, dx, sx, b, even);
  return hsum(_mm256_add_ps(even, odd));
}

// Four weight rows × C activation rows. Per block and token, the four rows' integer dot products are folded
// with horizontal adds into one vector (lane r and r + 4: row r's two halves), so the conversion, the scale
// multiply and the accumulation run once per four rows instead of once per row.
template <WeightType T, int C>
void micro_kernel_4rows(float* out, int64_t ldo, const uint8_t* w, size_t ws, const QuantizedActivations& xa,
                        int64_t t0) {
  const int64_t nb = xa.nb;
  const int8_t* xq = xa.qs + t0 * nb * 32;
  const float* dx = xa.scales + t0 * nb;
  const int32_t* sx = xa.sums + t0 * nb;
  __m256 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i wu[4], raw[4];
    uint64_t scales = 0;
    for (int r = 0; r < 4; ++r) {
      const uint8_t* wb = w + r * ws + static_cast<size_t>(b) * block_bytes<T>();
      wu[r] = unsigned_weights<T>(wb, raw[r]);
      uint16_t h;
      std::memcpy(&h, wb, 2);
      scales |= uint64_t{h} << (16 * r);
    }
    const __m128 dw4 = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(scales)));
    const __m256 dw = _mm256_set_m128(dw4, dw4);
    for (int c = 0; c < C; ++c) {
      const int64_t i = c * nb + b;
      const __m256i d01 = _mm256_hadd_epi32(block_dot_unsigned<T>(wu[0], raw[0], xq + i * 32),
                                            block_dot_unsigned<T>(wu[1], raw[1], xq + i * 32));
      const __m256i d23 = _mm256_hadd_epi32(block_dot_unsigned<T>(wu[2], raw[2], xq + i * 32),
                                            block_dot_unsigned<T>(wu[3], raw[3], xq + i * 32));
      __m256i d = _mm256_hadd_epi32(d01, d23);  // lanes 0-3: rows' low halves, 4-7: high halves
      // Q4_0: each lane folds four of the eight lanes, so it carries 4 of the 8 * sum x to subtract.
      if constexpr (T == WeightType::Q4_0) d = _mm256_sub_epi32(d, _mm256_set1_epi32(4 * sx[i]));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(dw, _mm256_set1_ps(dx[i])), acc[c]);
    }
  }
  for (int c = 0; c < C; ++c)
    _mm_storeu_ps(out + c * ldo,
                  _mm_add_ps(_mm256_castps256_ps128(acc[c]), _mm256_extractf128_ps(acc[c], 1)));
}

// Four activation quants (bytes 4k..4k+3 of a block) in every 32-bit lane.
inline __m256i broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm256_set1_epi32(v);
}

// Eight interleaved Q4_0 rows (one group) × NT activation rows from t0: out[t * ldo + r], r < 8. Per block
// the eight 32-byte nibble vectors (4 low, 4 high) are unpacked once and each multiplies a broadcast of four
// activation quants: 16 int16 lanes, lane 2r and 2r + 1 row r's. Eight products of <= 15 * 127 * 2 sum to at
// most 30480 (no int16 overflow); one madd folds the pairs into row r's int32 in lane r, the 8 * sum x of the
// nibble offset is subtracted, and one FMA scales all eight rows.
template <int NT>
void interleaved8_tile(float* out, int64_t ldo, const uint8_t* group, const QuantizedActivations& xa,
                       int64_t t0) {
  const int64_t nb = xa.nb;
  const __m256i mask = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = group + static_cast<size_t>(b) * interleaved_block_bytes<WeightType::Q4_0>();
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
    __m256i lo[4], hi[4];
    for (int v = 0; v < 4; ++v) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * v));
      lo[v] = _mm256_and_si256(raw, mask);
      hi[v] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask);
    }
    for (int t = 0; t < NT; ++t) {
      const int64_t i = (t0 + t) * nb + b;
      const int8_t* x = xa.qs + i * 32;
      __m256i s_lo = _mm256_maddubs_epi16(lo[0], broadcast4(x));
      __m256i s_hi = _mm256_maddubs_epi16(hi[0], broadcast4(x + 16));
      for (int v = 1; v < 4; ++v) {
        s_lo = _mm256_add_epi16(s_lo, _mm256_maddubs_epi16(lo[v], broadcast4(x + 4 * v)));
        s_hi = _mm256_add_epi16(s_hi, _mm256_maddubs_epi16(hi[v], broadcast4(x + 16 + 4 * v)));
      }
      __m256i d = _mm256_madd_epi16(_mm256_add_epi16(s_lo, s_hi), ones);
      d = _mm256_sub_epi32(d, _mm256_set1_epi32(8 * xa.sums[i]));
      acc[t] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(dw, _mm256_set1_ps(xa.scales[i])), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * ldo, acc[t]);
}

// Eight interleaved Q8_0 rows × NT activation rows: as interleaved8_tile, with signed weights. maddubs takes
// |w| and the activations with w's sign; a pair of products can reach 2 * 127 * 127, so every k-group is
// widened to int32 (madd) before it is summed. The block's eight vectors are taken four at a time (|w| and w
// of four vectors in eight registers).
template <int NT>
void interleaved8_tile_q8(float* out, int64_t ldo, const uint8_t* group, const QuantizedActivations& xa,
                          int64_t t0) {
  const int64_t nb = xa.nb;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = group + static_cast<size_t>(b) * interleaved_block_bytes<WeightType::Q8_0>();
    __m256i sum[NT];
    for (int half = 0; half < 2; ++half) {
      __m256i w[4], a[4];
      for (int v = 0; v < 4; ++v) {
        w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * (4 * half + v)));
        a[v] = _mm256_sign_epi8(w[v], w[v]);
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* x = xa.qs + ((t0 + t) * nb + b) * 32 + 16 * half;
        __m256i s =
            _mm256_madd_epi16(_mm256_maddubs_epi16(a[0], _mm256_sign_epi8(broadcast4(x), w[0])), ones);
        for (int v = 1; v < 4; ++v)
          s = _mm256_add_epi32(
              s, _mm256_madd_epi16(_mm256_maddubs_epi16(a[v], _mm256_sign_epi8(broadcast4(x + 4 * v), w[v])),
                                   ones));
        sum[t] = half == 0 ? s : _mm256_add_epi32(sum[t], s);
      }
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
    for (int t = 0; t < NT; ++t) {
      const int64_t i = (t0 + t) * nb + b;
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(dw, _mm256_set1_ps(xa.scales[i])),
                               acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * ldo, acc[t]);
}

template <WeightType T, int NT>
inline void interleaved_tile(float* out, int64_t ldo, const uint8_t* group, const QuantizedActivations& xa,
                             int64_t t0) {
  if constexpr (T == WeightType::Q8_0) {
    interleaved8_tile_q8<NT>(out, ldo, group, xa, t0);
  } else {
    interleaved8_tile<NT>(out, ldo, group, xa, t0);
  }
}

// Rows [0, nr) of an interleaved matrix (nr % 8 == 0): group by group, four tokens per tile (three: as fast
// for Q8_0, slower for Q4_0). Decode (one token) reads the weights in one sequential stream too.
template <WeightType T>
void matmul_rows_interleaved(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr,
                             const QuantizedActivations& xa, int64_t n_tok) {
  constexpr int NT = 4;
  for (int64_t g = 0; g < nr; g += kInterleaveRows) {
    const uint8_t* group = w + static_cast<size_t>(g) * ws;
    float* o = out + g;
    int64_t t = 0;
    for (; t + NT <= n_tok; t += NT) interleaved_tile<T, NT>(o + t * ldo, ldo, group, xa, t);
    switch (n_tok - t) {
      case 3:
        interleaved_tile<T, 3>(o + t * ldo, ldo, group, xa, t);
        break;
      case 2:
        interleaved_tile<T, 2>(o + t * ldo, ldo, group, xa, t);
        break;
      case 1:
        interleaved_tile<T, 1>(o + t * ldo, ldo, group, xa, t);
        break;
      default:
        break;
    }
  }
}

template <WeightType T>
void matmul_rows(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr,
                 const QuantizedActivations& xa, int64_t n_tok) {
  const int64_t nb = xa.nb;
  if (n_tok == 1) {
    // Decode: one row at a time, so the weights stream through memory in order (four interleaved rows
    // defeated the hardware prefetcher: 15 instead of 45 tokens/s on the 0.5B Q8_0 model).
    for (int64_t r = 0; r < nr; ++r)
      out[r] = row_dot<T>(w + static_cast<size_t>(r) * ws, xa.qs, xa.scales, xa.sums, nb);
    return;
  }
  constexpr int C = kQuantTileC;
  int64_t r = 0;
  for (; r + 4 <= nr; r += 4) {
    const uint8_t* wr = w + static_cast<size_t>(r) * ws;
    int64_t t = 0;
    for (; t + C <= n_tok; t += C) micro_kernel_4rows<T, C>(out + t * ldo + r, ldo, wr, ws, xa, t);
    for (; t < n_tok; ++t) micro_kernel_4rows<T, 1>(out + t * ldo + r, ldo, wr, ws, xa, t);
  }
  for (; r < nr; ++r) {
    const uint8_t* wr = w + static_cast<size_t>(r) * ws;
    for (int64_t t = 0; t < n_tok; ++t)
      out[t * ldo + r] = row_dot<T>(wr, xa.qs + t * nb * 32, xa.scales + t * nb, xa.sums + t * nb, nb);
  }
}

#else

template <WeightType T>
void matmul_rows(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr,
                 const QuantizedActivations& xa, int64_t n_tok) {
  const int64_t nb = xa.nb;
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t t = 0; t < n_tok; ++t)
      out[t * ldo + r] =
          dot_scalar_split<T>(w + static_cast<size_t>(r) * ws, xa.qs + t * nb * 32, xa.scales + t * nb, nb);
}

template <WeightType T>
void matmul_rows_interleaved(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr,
                             const QuantizedActivations& xa, int64_t n_tok) {
  const int64_t nb = xa.nb;
  std::vector<uint8_t> row(ws);
  for (int64_t r = 0; r < nr; ++r) {
    const uint8_t* group = w + static_cast<size_t>(r / kInterleaveRows * kInterleaveRows) * ws;
    for (int64_t b = 0; b < nb; ++b)
      deinterleave_block<T>(group + static_cast<size_t>(b) * interleaved_block_bytes<T>(),
                            static_cast<int>(r % kInterleaveRows),
                            row.data() + static_cast<size_t>(b) * block_bytes<T>());
    for (int64_t t = 0; t < n_tok; ++t)
      out[t * ldo + r] = dot_scalar_split<T>(row.data(), xa.qs + t * nb * 32, xa.scales + t * nb, nb);
  }
}

#endif

// One block of 32 activations to Q8_0: fp16 scale into *d, quants into qs.
void quantize_block_q8_0(const float* v, uint16_t* d, int8_t* qs) {
#ifdef GPS_QUANT_AVX2
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8), v2 = _mm256_loadu_ps(v + 16),
         v3 = _mm256_loadu_ps(v + 24);
  __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign_mask, v0), _mm256_andnot_ps(sign_mask, v1)),
                           _mm256_max_ps(_mm256_andnot_ps(sign_mask, v2), _mm256_andnot_ps(sign_mask, v3)));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float amax = _mm_cvtss_f32(m4);
  *d = f32_to_f16(amax / 127.0f);
  const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, id), kRound));
  const __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, id), kRound));
  const __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, id), kRound));
  const __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, id), kRound));
  // Pack 32-bit → 16-bit → 8-bit (saturating), then undo the lane interleaving of the packs.
  __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), p);
#else
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(v[j]));
  *d = f32_to_f16(amax / 127.0f);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < 32; ++j)
    qs[j] = static_cast<int8_t>(std::nearbyint(std::clamp(v[j] * id, -127.0f, 127.0f)));
#endif
}

}  // namespace

void quantize_activations_q8_0(const float* x, int64_t ldx, int64_t n_tok, int64_t n, BlockQ8_0* out) {
  const int64_t nb = n / kQ8_0Block;
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t b = 0; b < nb; ++b) {
      BlockQ8_0& blk = out[t * nb + b];
      quantize_block_q8_0(x + t * ldx + b * kQ8_0Block, &blk.d, blk.qs);
    }
}

int64_t quantized_activations_bytes(int64_t n_tok, int64_t n) {
  const int64_t count = n_tok * (n / kQ8_0Block);
  return count * static_cast<int64_t>(kQ8_0Block + sizeof(float) + sizeof(int32_t)) +
         64;  // + alignment slack
}

QuantizedActivations quantized_activations_in(void* scratch, int64_t n_tok, int64_t n) {
  QuantizedActivations qa;
  qa.nb = n / kQ8_0Block;
  const int64_t count = n_tok * qa.nb;
  // Scales and sums first (4-byte aligned as the scratch is), then the quants from the next 32-byte boundary.
  qa.scales = static_cast<float*>(scratch);
  qa.sums = reinterpret_cast<int32_t*>(qa.scales + count);
  const auto after = reinterpret_cast<uintptr_t>(qa.sums + count);
  qa.qs = reinterpret_cast<int8_t*>((after + 31) & ~uintptr_t{31});
  return qa;
}

void quantize_activations(const float* x, int64_t ldx, int64_t t0, int64_t count,
                          const QuantizedActivations& qa) {
  const int64_t nb = qa.nb;
  for (int64_t t = t0; t < t0 + count; ++t)
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t i = t * nb + b;
      int8_t* q = qa.qs + i * kQ8_0Block;
      uint16_t d;
      quantize_block_q8_0(x + t * ldx + b * kQ8_0Block, &d, q);
      qa.scales[i] = f16_to_f32(d);
      int32_t sum = 0;
      for (int j = 0; j < kQ8_0Block; ++j) sum += q[j];
      qa.sums[i] = sum;
    }
}

void quant_matmul_rows(float* out, int64_t ldo, const MatrixView& w, int64_t r0, int64_t nr,
                       const QuantizedActivations& xa, int64_t n_tok) {
  const auto* base = static_cast<const uint8_t*>(w.row(r0));
  const size_t ws = w.row_bytes();
  if (w.layout == RowLayout::Interleaved8 && w.type == WeightType::Q8_0) {
    matmul_rows_interleaved<WeightType::Q8_0>(out + r0, ldo, base, ws, nr, xa, n_tok);
  } else if (w.layout == RowLayout::Interleaved8) {
    matmul_rows_interleaved<WeightType::Q4_0>(out + r0, ldo, base, ws, nr, xa, n_tok);
  } else if (w.type == WeightType::Q8_0) {
    matmul_rows<WeightType::Q8_0>(out + r0, ldo, base, ws, nr, xa, n_tok);
  } else {
    matmul_rows<WeightType::Q4_0>(out + r0, ldo, base, ws, nr, xa, n_tok);
  }
}

bool can_interleave_rows(const MatrixView& w) {
  return is_quantized(w.type) && w.layout != RowLayout::Interleaved8 && w.rows % kInterleaveRows == 0 &&
         w.cols % 32 == 0;
}

void interleave_quantized_rows(const MatrixView& w, void* out) {
  const size_t ws = w.row_bytes();
  const int64_t nb = w.cols / kQ8_0Block;
  const size_t bb = row_bytes(w.type, kQ8_0Block);  // one block
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t g = 0; g < w.rows; g += kInterleaveRows)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = dst + static_cast<size_t>(g) * ws + static_cast<size_t>(b) * kInterleaveRows * bb;
      for (int r = 0; r < kInterleaveRows; ++r) {
        const auto* src = static_cast<const uint8_t*>(w.row(g + r)) + static_cast<size_t>(b) * bb;
        std::memcpy(blk + 2 * r, src, 2);
        for (int j = 0; j < static_cast<int>(bb) - 2; ++j) blk[interleaved_quant_offset(r, j)] = src[2 + j];
      }
    }
}

float quant_dot_ref(const void* w_row, WeightType type, const BlockQ8_0* xq, int64_t n_blocks) {
  const auto* w = static_cast<const uint8_t*>(w_row);
  return type == WeightType::Q8_0 ? dot_scalar<WeightType::Q8_0>(w, xq, n_blocks)
                                  : dot_scalar<WeightType::Q4_0>(w, xq, n_blocks);
}

}  // namespace gpstream::kernels
