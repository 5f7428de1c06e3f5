// Internal to the CPU reference: typed element access and one-block quantize/dequantize loops,
// shared by the plain and the qgZ entry points.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/quant_math.hpp"
#include "kernels/quantize.hpp"
#include "kernels/ref/checks.hpp"

namespace zerosim::kernels::ref {

// Element i of a buffer that may be unaligned (the API takes void* at any byte offset): memcpy,
// since dereferencing a misaligned T* is undefined behaviour (found by UBSan).
template <class T>
T load_unaligned(const T* p, std::size_t i) {
  T v;
  std::memcpy(&v, reinterpret_cast<const unsigned char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store_unaligned(T* p, std::size_t i, T v) {
  std::memcpy(reinterpret_cast<unsigned char*>(p) + i * sizeof(T), &v, sizeof(T));
}

// Element loaders/storers by type; Elem is float, or uint16_t bits tagged by the DType.
template <DType D>
struct Elem;
template <>
struct Elem<DType::kF32> {
  using T = float;
  static float load(const T* p, std::size_t i) { return load_unaligned(p, i); }
  static void store(T* p, std::size_t i, float v) { store_unaligned(p, i, v); }
};
template <>
struct Elem<DType::kF16> {
  using T = std::uint16_t;
  static float load(const T* p, std::size_t i) {
    return detail::f16_bits_to_f32(load_unaligned(p, i));
  }
  static void store(T* p, std::size_t i, float v) {
    store_unaligned(p, i, detail::f32_to_f16_bits(v));
  }
};
template <>
struct Elem<DType::kBF16> {
  using T = std::uint16_t;
  static float load(const T* p, std::size_t i) {
    return detail::bf16_bits_to_f32(load_unaligned(p, i));
  }
  static void store(T* p, std::size_t i, float v) {
    store_unaligned(p, i, detail::f32_to_bf16_bits(v));
  }
};

// Calls f.template operator()<D>() for the runtime dtype t.
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF16:
      return f.template operator()<DType::kF16>();
    case DType::kBF16:
      return f.template operator()<DType::kBF16>();
    case DType::kF32:
    default:
      return f.template operator()<DType::kF32>();
  }
}

// Quantize `len` values given by load(i) (i in [0, len)) into one block: codes at dst (packed for
// INT4, len even or the last nibble left 0), scale (and offset) at *scale / *offset.
template <class Load>
void quantize_block(Load load, std::size_t len, const QuantParams& p, std::uint8_t* dst,
                    float* scale, float* offset) {
  detail::BlockQ b;
  if (p.asymmetric) {
    float lo = detail::kPosInf, hi = -detail::kPosInf;
    for (std::size_t i = 0; i < len; ++i) {
      const float v = load(i);
      lo = detail::min_nan_ignoring(lo, v);
      hi = detail::max_nan_ignoring(hi, v);
    }
    if (lo > hi) lo = hi = 0.0f;  // every element NaN
    b = detail::block_asymmetric(lo, hi, p.bits);
    *offset = b.offset;
  } else {
    float amax = 0.0f;
    for (std::size_t i = 0; i < len; ++i)
      amax = detail::max_nan_ignoring(amax, detail::fabs_bits(load(i)));
    b = detail::block_symmetric(amax, p.bits);
  }
  *scale = b.scale;
  auto code = [&](std::size_t i) {
    return p.asymmetric ? detail::quantize_asymmetric(load(i), b, p.bits)
                        : detail::quantize_symmetric(load(i), b, p.bits);
  };
  if (p.bits == 8) {
    for (std::size_t i = 0; i < len; ++i) dst[i] = static_cast<std::uint8_t>(code(i));
  } else {
    std::size_t i = 0;
    for (; i + 1 < len; i += 2) dst[i / 2] = detail::pack_nibbles(code(i), code(i + 1));
    if (i < len) dst[i / 2] = detail::pack_nibbles(code(i), 0);
  }
}

// Dequantized value of element i of a block.
inline float dequantize_at(const std::uint8_t* src, std::size_t i, float scale, float offset,
                           const QuantParams& p) {
  int q;
  if (p.bits == 8) {
    q = p.asymmetric ? static_cast<int>(src[i])
                     : static_cast<int>(static_cast<std::int8_t>(src[i]));
  } else {
    const int high = static_cast<int>(i & 1u);
    q = p.asymmetric ? detail::nibble_unsigned(src[i / 2], high)
                     : detail::nibble_signed(src[i / 2], high);
  }
  return p.asymmetric ? detail::dequantize_asymmetric(q, scale, offset)
                      : detail::dequantize_symmetric(q, scale);
}

// Walks the blocks of a tensor of n elements: f(first_element, len, byte_offset, block_index).
template <class F>
void for_each_block(std::size_t n, const QuantParams& p, F&& f) {
  const std::size_t seg = segment_elements(n, p);
  if (seg == 0) return;
  const std::size_t seg_bytes = quantized_bytes(seg, p);
  const std::size_t blocks_per_seg = num_blocks(seg, p);
  for (std::size_t s = 0; s * seg < n; ++s) {
    for (std::size_t b = 0; b < blocks_per_seg; ++b) {
      const std::size_t first = b * p.block_size;
      const std::size_t len = first + p.block_size <= seg ? p.block_size : seg - first;
      f(s * seg + first, len, s * seg_bytes + first * static_cast<std::size_t>(p.bits) / 8,
        s * blocks_per_seg + b);
    }
  }
}

}  // namespace zerosim::kernels::ref
