// Scalar arithmetic shared by the CPU reference and the CUDA kernels, so both produce the same
// bits. Every operation is one correctly rounded binary32 op; on the device the __f*_rn intrinsics
// stop nvcc from fusing a multiply and an add into an FMA (the host build uses ISO C++ mode, where
// GCC does not contract). See kernels/quantize.hpp for the formulas this implements.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ZS_HD __host__ __device__ __forceinline__
#else
#define ZS_HD inline
#endif

namespace zerosim::kernels::detail {

ZS_HD float fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
ZS_HD float fadd(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
ZS_HD float fsub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
ZS_HD float fdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Round to nearest, ties to even, for |v| <= 2^22 (callers clamp first). The host uses the
// 1.5 * 2^23 trick (exact in round-to-nearest-even mode; the project never builds with
// -ffast-math, which could fold it); the device has an instruction for it.
ZS_HD float rne_small(float v) {
#if defined(__CUDA_ARCH__)
  return rintf(v);
#else
  return (v + 12582912.0f) - 12582912.0f;
#endif
}

// NaN-ignoring max/min written as comparisons so host and device agree (a NaN never wins).
ZS_HD float max_nan_ignoring(float m, float v) { return v > m ? v : m; }
ZS_HD float min_nan_ignoring(float m, float v) { return v < m ? v : m; }
ZS_HD float fabs_bits(float v) { return v < 0.0f ? -v : (v == 0.0f ? 0.0f : v); }
// Clamp with a NaN going to the lower bound.
ZS_HD float clamp(float v, float lo, float hi) {
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

inline constexpr float kTiny = 0x1p-64f;
inline constexpr float kHuge = 0x1p64f;
inline constexpr float kPosInf = __builtin_huge_valf();

// Per-block quantization parameters.
struct BlockQ {
  float scale = 0.0f;   // stored
  float offset = 0.0f;  // stored (asymmetric): block minimum
  float inv = 0.0f;     // multiplier after pre-scaling
  float pre = 1.0f;     // exact power of two
  float lo_pre = 0.0f;  // offset * pre (asymmetric)
};

ZS_HD int qmax_of(int bits) { return bits == 8 ? 127 : 7; }
ZS_HD int levels_of(int bits) { return bits == 8 ? 255 : 15; }

ZS_HD BlockQ block_symmetric(float amax, int bits) {
  const float qmax = static_cast<float>(qmax_of(bits));
  BlockQ b;
  b.pre = amax < kTiny ? kHuge : 1.0f;
  b.scale = fdiv(amax, qmax);
  b.inv = amax > 0.0f ? fdiv(qmax, fmul(amax, b.pre)) : 0.0f;
  return b;
}

ZS_HD BlockQ block_asymmetric(float lo, float hi, int bits) {
  const float levels = static_cast<float>(levels_of(bits));
  lo = fadd(lo, 0.0f);  // -0 -> +0 so the stored offset does not depend on min's tie rule
  hi = fadd(hi, 0.0f);
  const float amax = max_nan_ignoring(fabs_bits(lo), fabs_bits(hi));
  BlockQ b;
  b.pre = amax < kTiny ? kHuge : (amax > kHuge ? kTiny : 1.0f);
  b.lo_pre = fmul(lo, b.pre);
  const float range = fsub(fmul(hi, b.pre), b.lo_pre);
  b.scale = fmul(fdiv(range, levels), fdiv(1.0f, b.pre));
  b.inv = range > 0.0f ? fdiv(levels, range) : 0.0f;
  b.offset = lo;
  return b;
}

// Quantized code of one element: signed in [-qmax, qmax] or unsigned in [0, levels].
ZS_HD int quantize_symmetric(float x, const BlockQ& b, int bits) {
  const float qmax = static_cast<float>(qmax_of(bits));
  const float v = fmul(fmul(x, b.pre), b.inv);
  return static_cast<int>(rne_small(clamp(v, -qmax, qmax)));
}
ZS_HD int quantize_asymmetric(float x, const BlockQ& b, int bits) {
  const float levels = static_cast<float>(levels_of(bits));
  const float v = fmul(fsub(fmul(x, b.pre), b.lo_pre), b.inv);
  return static_cast<int>(rne_small(clamp(v, 0.0f, levels)));
}

ZS_HD float dequantize_symmetric(int q, float scale) { return fmul(static_cast<float>(q), scale); }
ZS_HD float dequantize_asymmetric(int q, float scale, float offset) {
  return fadd(fmul(static_cast<float>(q), scale), offset);
}

// INT4 nibble codec: element 2i in the low nibble, 2i+1 in the high nibble.
ZS_HD std::uint8_t pack_nibbles(int even, int odd) {
  return static_cast<std::uint8_t>((static_cast<unsigned>(even) & 0xFu) |
                                   ((static_cast<unsigned>(odd) & 0xFu) << 4));
}
ZS_HD int nibble_signed(std::uint8_t byte, int high) {
  const int v = high ? (byte >> 4) : (byte & 0xF);
  return v >= 8 ? v - 16 : v;
}
ZS_HD int nibble_unsigned(std::uint8_t byte, int high) { return high ? (byte >> 4) : (byte & 0xF); }

// qgZ reorder: first source element of output unit k = (stage * N + j) * Y + y, which is sub-slice
// `stage` of partition y * N + j (units of u elements, partitions of n / (Y * N)).
ZS_HD std::size_t qgz_source(std::size_t k, std::size_t n, std::size_t nodes, std::size_t gpus,
                             std::size_t u) {
  const std::size_t y = k % nodes;
  const std::size_t j = (k / nodes) % gpus;
  const std::size_t stage = k / (nodes * gpus);
  return (y * gpus + j) * (n / (nodes * gpus)) + stage * u;
}

// ---- FP16 / BF16 bit conversions (host). No library in GCC 12 offers them portably, so these are
// the IEEE-754 rules written out: round to nearest even, overflow to Inf, NaN -> 0x7FFF (the
// canonical NaN CUDA's __float2half_rn / __float2bfloat16_rn produce). The device uses those
// intrinsics, which round the same way.
inline std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_f32(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::uint16_t f32_to_f16_bits(float f) {
  const std::uint32_t x = f32_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FFF;                                       // NaN
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: Inf
  if (a < 0x38800000u) {                // below 2^-14: FP16 subnormal
    if (a <= 0x33000000u) return sign;  // <= 2^-25 rounds to 0 (tie: even)
    const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - (a >> 23);  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t h = (a - 0x38000000u) >> 13;  // rebias exponent 127 -> 15
  const std::uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

inline float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact: m < 2^10
    return sign ? -v : v;
  }
  if (e == 31) return bits_f32(sign | 0x7F800000u | (m << 13));
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

inline std::uint16_t f32_to_bf16_bits(float f) {
  const std::uint32_t x = f32_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;  // NaN
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16_bits_to_f32(std::uint16_t b) {
  return bits_f32(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace zerosim::kernels::detail
