// Helpers for the kernel tests: typed input generation and the round-trip error bound.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/quant_math.hpp"
#include "kernels/quantize.hpp"

namespace zerosim::kernels::testing {

// A tensor stored as raw bytes of the given dtype, plus the exact FP32 value of every element.
struct Tensor {
  DType type = DType::kF32;
  std::vector<std::uint8_t> bytes;
  std::vector<float> values;  // exactly representable in `type`
};

inline Tensor make_tensor(DType t, const std::vector<float>& wanted) {
  Tensor x;
  x.type = t;
  x.bytes.resize(wanted.size() * dtype_bytes(t));
  x.values.resize(wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (t == DType::kF32) {
      std::memcpy(&x.bytes[4 * i], &wanted[i], 4);
      x.values[i] = wanted[i];
    } else {
      const std::uint16_t h = t == DType::kF16 ? detail::f32_to_f16_bits(wanted[i])
                                               : detail::f32_to_bf16_bits(wanted[i]);
      std::memcpy(&x.bytes[2 * i], &h, 2);
      x.values[i] = t == DType::kF16 ? detail::f16_bits_to_f32(h) : detail::bf16_bits_to_f32(h);
    }
  }
  return x;
}

inline std::vector<float> random_normal(std::size_t n, float sigma, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Quantized tensor with owned buffers sized by the public layout functions.
struct QBuf {
  std::vector<std::uint8_t> data;
  std::vector<float> scales, offsets;
  QBuf(std::size_t n, const QuantParams& p)
      : data(quantized_bytes(n, p)), scales(num_blocks(n, p)), offsets(num_blocks(n, p)) {}
  QuantizedRef ref() { return {data.data(), scales.data(), offsets.data()}; }
  QuantizedCRef cref() const { return {data.data(), scales.data(), offsets.data()}; }
};

// Largest |x - dequant(quant(x))| the arithmetic in kernels/quantize.hpp allows for an element of
// a block with stored scale `scale` and magnitude bound `amax`: half a step, plus the relative
// 2^-20 of amax that the handful of FP32 roundings (inverse, product, dequant multiply/add) can
// add, plus 256 quanta of FP32's smallest denormal 2^-149 for blocks whose scale is itself
// denormal (a scale below 2^-126 carries an absolute rounding error of up to 2^-150, times |q|).
inline double roundtrip_bound(double scale, double amax) {
  return 0.5 * scale + amax * std::ldexp(1.0, -20) + 256.0 * std::ldexp(1.0, -149);
}

}  // namespace zerosim::kernels::testing
