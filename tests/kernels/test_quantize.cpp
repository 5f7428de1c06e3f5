// Block quantization reference: round-trip bound, packing order, rounding, layout, odd sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/quantize.hpp"

using namespace zerosim::kernels;
using zerosim::kernels::testing::make_tensor;
using zerosim::kernels::testing::QBuf;
using zerosim::kernels::testing::random_normal;
using zerosim::kernels::testing::roundtrip_bound;

namespace {

// Quantize + dequantize to FP32 and check every element against the bound of its block.
void check_roundtrip(const std::vector<float>& wanted, DType t, const QuantParams& p) {
  const auto x = make_tensor(t, wanted);
  const std::size_t n = wanted.size();
  QBuf q(n, p);
  quantize(x.bytes.data(), t, n, p, q.ref());
  std::vector<float> y(n);
  dequantize(q.cref(), n, p, y.data(), DType::kF32);
  const std::size_t seg = segment_elements(n, p);
  std::size_t worst = 0;
  double worst_excess = -1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s = i / seg, b = (i % seg) / p.block_size;
    const std::size_t block = s * num_blocks(seg, p) + b;
    const std::size_t first = s * seg + b * p.block_size;
    const std::size_t last = std::min(first + p.block_size, (s + 1) * seg);
    double amax = 0.0;
    for (std::size_t k = first; k < last; ++k)
      amax = std::max(amax, std::fabs(double(x.values[k])));
    const double err = std::fabs(double(x.values[i]) - double(y[i]));
    const double excess = err - roundtrip_bound(q.scales[block], amax);
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  INFO("dtype " << dtype_name(t) << " bits " << p.bits << " asym " << p.asymmetric << " bs "
                << p.block_size << " n " << n << " worst element " << worst << " x "
                << x.values[worst] << " y " << y[worst]);
  CHECK(worst_excess <= 0.0);

  // Dequantizing to FP16/BF16 is the FP32 result rounded once (nearest even).
  if (t != DType::kF32) {
    std::vector<std::uint16_t> h(n);
    dequantize(q.cref(), n, p, h.data(), t);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t want =
          t == DType::kF16 ? detail::f32_to_f16_bits(y[i]) : detail::f32_to_bf16_bits(y[i]);
      if (h[i] != want) {
        FAIL("FP16/BF16 dequantize differs from rounding the FP32 result at " << i);
      }
    }
  }
}

std::vector<QuantParams> all_params(std::size_t block_size) {
  std::vector<QuantParams> ps;
  for (int bits : {8, 4}) {
    for (bool asym : {false, true}) {
      QuantParams p;
      p.bits = bits;
      p.asymmetric = asym;
      p.block_size = block_size;
      ps.push_back(p);
    }
  }
  return ps;
}

std::vector<float> huge_range(std::size_t n) {
  // Magnitudes 1e-30 .. 1e30 for FP32/BF16 (FP16 rounds them to 0/Inf, so it gets its own range).
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double e = -30.0 + 60.0 * double(i % 61) / 60.0;
    v[i] = float((i % 2 ? -1.0 : 1.0) * std::pow(10.0, e));
  }
  return v;
}

std::vector<float> huge_range_f16(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = float((i % 3 ? -1.0 : 1.0) * std::pow(2.0, -24.0 + double(i % 40)));  // 2^-24..2^15
  }
  return v;
}

std::vector<float> denormals(DType t, std::size_t n) {
  // FP16: subnormals k * 2^-24; FP32/BF16: FP32 subnormals (BF16 shares FP32's exponent).
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double k = double(1 + (i * 37) % 1000) * (i % 2 ? -1.0 : 1.0);
    v[i] = t == DType::kF16 ? float(k * std::ldexp(1.0, -24)) : float(k * std::ldexp(1.0, -140));
  }
  return v;
}

}  // namespace

TEST_CASE("round trip within half a step: random, constant, zero, huge-range, denormal inputs") {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (std::size_t bs : {std::size_t{4096}, std::size_t{64}, std::size_t{6}}) {
      for (const auto& p : all_params(bs)) {
        check_roundtrip(random_normal(10000, 0.02f, 1), t, p);
        check_roundtrip(random_normal(777, 3.0f, 2), t, p);
        check_roundtrip(std::vector<float>(1000, 0.7f), t, p);
        check_roundtrip(std::vector<float>(1000, -2.5f), t, p);
        check_roundtrip(std::vector<float>(1001, 0.0f), t, p);
        check_roundtrip(t == DType::kF16 ? huge_range_f16(999) : huge_range(999), t, p);
        check_roundtrip(denormals(t, 1234), t, p);
      }
    }
  }
}

TEST_CASE("constant and all-zero blocks dequantize exactly") {
  for (const auto& p : all_params(128)) {
    for (float c : {0.0f, 0.7f, -3.25f}) {
      const std::vector<float> x(300, c);
      QBuf q(x.size(), p);
      quantize(x.data(), DType::kF32, x.size(), p, q.ref());
      std::vector<float> y(x.size());
      dequantize(q.cref(), x.size(), p, y.data(), DType::kF32);
      // Symmetric: c = 127 (or 7) * (|c| / qmax) may round by one FP32 ulp; asymmetric: offset = c.
      for (float v : y) CHECK(std::fabs(v - c) <= std::fabs(c) * 0x1p-23f);
      if (c == 0.0f)
        CHECK(std::all_of(q.scales.begin(), q.scales.end(), [](float s) { return s == 0; }));
    }
  }
}

TEST_CASE("symmetric: the largest magnitude maps to +-qmax; codes stay in range") {
  for (int bits : {8, 4}) {
    QuantParams p;
    p.bits = bits;
    p.block_size = 512;
    auto x = random_normal(512, 1.0f, 7);
    const auto it = std::max_element(x.begin(), x.end(),
                                     [](float a, float b) { return std::fabs(a) < std::fabs(b); });
    const std::size_t imax = std::size_t(it - x.begin());
    QBuf q(512, p);
    quantize(x.data(), DType::kF32, 512, p, q.ref());
    const int qmax = bits == 8 ? 127 : 7;
    const int code = bits == 8 ? int(std::int8_t(q.data[imax]))
                               : detail::nibble_signed(q.data[imax / 2], int(imax % 2));
    CHECK(code == (x[imax] > 0 ? qmax : -qmax));
    CHECK(q.scales[0] == std::fabs(x[imax]) / float(qmax));
  }
}

TEST_CASE("round to nearest even on exact halves") {
  // amax = 127 gives scale 1 and inverse 1, so codes are rne(x) exactly.
  const std::vector<float> x = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.5f, -2.5f};
  QuantParams p;
  p.block_size = 8;
  QBuf q(x.size(), p);
  quantize(x.data(), DType::kF32, x.size(), p, q.ref());
  const std::vector<int> want = {127, 0, 2, 2, 0, -2, 4, -2};
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(int(std::int8_t(q.data[i])) == want[i]);
  CHECK(q.scales[0] == 1.0f);
}

TEST_CASE("INT4 packing: element 2i in the low nibble, 2i+1 in the high nibble") {
  QuantParams p;
  p.bits = 4;
  p.block_size = 6;
  {
    // amax 7 -> scale 1: codes equal the inputs; -1 = 0xF, -7 = 0x9 (two's complement nibbles).
    const std::vector<float> x = {1, -1, 7, -7, 0, 3};
    QBuf q(6, p);
    quantize(x.data(), DType::kF32, 6, p, q.ref());
    REQUIRE(q.data.size() == 3);
    CHECK(q.data[0] == 0xF1);
    CHECK(q.data[1] == 0x97);
    CHECK(q.data[2] == 0x30);
  }
  {
    // Odd count: 5 elements, amax 5 -> codes rne(x * 7 / 5) = 1, 3, 4, 6, 7; last high nibble 0.
    const std::vector<float> x = {1, 2, 3, 4, 5};
    QBuf q(5, p);
    REQUIRE(q.data.size() == 3);
    quantize(x.data(), DType::kF32, 5, p, q.ref());
    CHECK(q.data[0] == 0x31);
    CHECK(q.data[1] == 0x64);
    CHECK(q.data[2] == 0x07);
  }
  {
    // Asymmetric: min 0, max 15 -> scale 1, offset 0, unsigned codes.
    p.asymmetric = true;
    const std::vector<float> x = {0, 15, 5, 10};
    QBuf q(4, p);
    quantize(x.data(), DType::kF32, 4, p, q.ref());
    CHECK(q.data[0] == 0xF0);
    CHECK(q.data[1] == 0xA5);
    CHECK(q.scales[0] == 1.0f);
    CHECK(q.offsets[0] == 0.0f);
  }
}

TEST_CASE("layout sizes for odd element counts, and no write past the buffers") {
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4095}, std::size_t{4097},
                        std::size_t{8191}, std::size_t{12289}}) {
    for (const auto& p : all_params(kDefaultBlockSize)) {
      CHECK(num_blocks(n, p) == (n + 4095) / 4096);
      CHECK(quantized_bytes(n, p) == (p.bits == 8 ? n : (n + 1) / 2));
      const auto x = make_tensor(DType::kF16, random_normal(n, 1.0f, std::uint32_t(n)));
      // Exact-size buffers followed by canaries.
      std::vector<std::uint8_t> data(quantized_bytes(n, p) + 16, 0xAB);
      std::vector<float> scales(num_blocks(n, p) + 4, -1.0f), offsets(num_blocks(n, p) + 4, -1.0f);
      quantize(x.bytes.data(), DType::kF16, n, p, {data.data(), scales.data(), offsets.data()});
      for (std::size_t i = quantized_bytes(n, p); i < data.size(); ++i) CHECK(data[i] == 0xAB);
      for (std::size_t i = num_blocks(n, p); i < scales.size(); ++i) {
        CHECK(scales[i] == -1.0f);
        CHECK(offsets[i] == -1.0f);
      }
      // Unaligned input and output (odd byte offsets) work the same.
      std::vector<std::uint8_t> shifted(x.bytes.size() + 1);
      std::copy(x.bytes.begin(), x.bytes.end(), shifted.begin() + 1);
      std::vector<std::uint8_t> data2(quantized_bytes(n, p) + 1);
      std::vector<float> s2(num_blocks(n, p)), o2(num_blocks(n, p));
      quantize(shifted.data() + 1, DType::kF16, n, p, {data2.data() + 1, s2.data(), o2.data()});
      CHECK(std::equal(data2.begin() + 1, data2.end(), data.begin()));
    }
  }
}

TEST_CASE("segments: blocks restart at every segment boundary") {
  for (auto p : all_params(100)) {
    const std::size_t seg = 250, n = 1000;  // 3 blocks per segment: 100, 100, 50
    const auto x = random_normal(n, 1.0f, 11);
    QuantParams ps = p;
    ps.segment = seg;
    QBuf whole(n, ps);
    CHECK(whole.scales.size() == 12);
    quantize(x.data(), DType::kF32, n, ps, whole.ref());
    for (std::size_t s = 0; s < n / seg; ++s) {
      QBuf part(seg, p);
      quantize(x.data() + s * seg, DType::kF32, seg, p, part.ref());
      CHECK(std::equal(part.data.begin(), part.data.end(),
                       whole.data.begin() + std::ptrdiff_t(s * quantized_bytes(seg, p))));
      CHECK(std::equal(part.scales.begin(), part.scales.end(),
                       whole.scales.begin() + std::ptrdiff_t(s * 3)));
    }
  }
}

TEST_CASE("FP16 and BF16 conversions round to nearest even") {
  using namespace detail;
  CHECK(f32_to_f16_bits(1.0f) == 0x3C00);
  CHECK(f32_to_f16_bits(-2.0f) == 0xC000);
  CHECK(f32_to_f16_bits(65504.0f) == 0x7BFF);
  CHECK(f32_to_f16_bits(65519.99f) == 0x7BFF);
  CHECK(f32_to_f16_bits(65520.0f) == 0x7C00);  // halfway to 2^16: ties to even = Inf
  CHECK(f32_to_f16_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(f32_to_f16_bits(std::nanf("")) == 0x7FFF);
  CHECK(f32_to_f16_bits(1.0f + 0x1p-11f) == 0x3C00);      // tie, even stays
  CHECK(f32_to_f16_bits(1.0f + 3 * 0x1p-11f) == 0x3C02);  // tie, odd rounds up
  CHECK(f32_to_f16_bits(0x1p-24f) == 0x0001);             // smallest subnormal
  CHECK(f32_to_f16_bits(0x1p-25f) == 0x0000);             // tie to even: 0
  CHECK(f32_to_f16_bits(3 * 0x1p-26f) == 0x0001);         // 0.75 quantum rounds up
  CHECK(f32_to_f16_bits(3 * 0x1p-25f) == 0x0002);         // 1.5 quanta: tie to even 2
  CHECK(f32_to_f16_bits(0x1p-14f - 0x1p-25f) == 0x0400);  // rounds up into the normals
  CHECK(f32_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(f32_to_bf16_bits(1.0f + 0x1p-8f) == 0x3F80);      // tie, even stays
  CHECK(f32_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3F82);  // tie, odd rounds up
  CHECK(f32_to_bf16_bits(std::nanf("")) == 0x7FFF);
  CHECK(f32_to_bf16_bits(bits_f32(0x7F7FFFFFu)) == 0x7F80);  // FLT_MAX rounds to Inf
  // Every non-NaN 16-bit pattern survives a round trip through FP32.
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = std::uint16_t(b);
    if ((h & 0x7C00) != 0x7C00 || (h & 0x3FF) == 0) CHECK(f32_to_f16_bits(f16_bits_to_f32(h)) == h);
    if ((h & 0x7F80) != 0x7F80 || (h & 0x7F) == 0)
      CHECK(f32_to_bf16_bits(bf16_bits_to_f32(h)) == h);
  }
  CHECK(f16_bits_to_f32(0x0001) == 0x1p-24f);
  CHECK(f16_bits_to_f32(0x8400) == -0x1p-14f);
}
