// qgZ fused kernels equal their unfused definitions: swizzle = permute then quantize by unit;
// dequant-reduce-quantize = dequantize each, sum in FP32, quantize; dequant-reduce likewise.
#include <doctest/doctest.h>

#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/quantize.hpp"

using namespace zerosim::kernels;
using zerosim::kernels::testing::make_tensor;
using zerosim::kernels::testing::QBuf;
using zerosim::kernels::testing::random_normal;

TEST_CASE("qgz_unit_source orders units (stage, local gpu, node)") {
  // Y = 2 nodes, N = 3 GPUs, S = 2 slices, n = 24: partitions of 4 elements, units of 2.
  const QgzShape s{2, 3, 2};
  CHECK(qgz_unit_elements(24, s) == 2);
  // Unit k = (stage * N + j) * Y + y holds sub-slice `stage` of partition y * N + j.
  CHECK(qgz_unit_source(0, 24, s) == 0);      // stage 0, j 0, y 0: partition 0
  CHECK(qgz_unit_source(1, 24, s) == 3 * 4);  // stage 0, j 0, y 1: partition 3
  CHECK(qgz_unit_source(2, 24, s) == 1 * 4);  // stage 0, j 1, y 0: partition 1
  CHECK(qgz_unit_source(5, 24, s) == 5 * 4);  // stage 0, j 2, y 1: partition 5
  CHECK(qgz_unit_source(6, 24, s) == 0 + 2);  // stage 1, j 0, y 0: partition 0, second half
  CHECK(qgz_unit_source(11, 24, s) == 5 * 4 + 2);
}

TEST_CASE("swizzle + quantize equals quantizing the permuted tensor unit by unit") {
  for (int bits : {4, 8}) {
    for (const QgzShape& s : {QgzShape{2, 4, 1}, QgzShape{3, 2, 2}, QgzShape{2, 3, 3}}) {
      const std::size_t w = s.nodes * s.gpus_per_node;
      const std::size_t n = 2 * w * s.pipeline_slices * 37;  // units of 74 elements
      QuantParams p;
      p.bits = bits;
      p.block_size = 32;
      const auto x = make_tensor(DType::kBF16, random_normal(n, 1.0f, 5));
      const std::size_t u = qgz_unit_elements(n, s);
      // Permute by the definition in kernels/quantize.hpp, written out as loops.
      std::vector<float> permuted;
      for (std::size_t st = 0; st < s.pipeline_slices; ++st)
        for (std::size_t j = 0; j < s.gpus_per_node; ++j)
          for (std::size_t y = 0; y < s.nodes; ++y) {
            const std::size_t part = y * s.gpus_per_node + j;
            for (std::size_t e = 0; e < u; ++e)
              permuted.push_back(x.values[part * (n / w) + st * u + e]);
          }
      QuantParams pu = p;
      pu.segment = u;
      QBuf want(n, pu), got(n, pu);
      quantize(permuted.data(), DType::kF32, n, pu, want.ref());
      qgz_swizzle_quantize(x.bytes.data(), DType::kBF16, n, s, p, got.ref());
      CHECK(got.data == want.data);
      CHECK(got.scales == want.scales);
    }
  }
}

TEST_CASE("dequant_reduce_quantize and dequant_reduce equal the unfused sequence") {
  for (int bits : {4, 8}) {
    for (bool asym : {false, true}) {
      QuantParams p;
      p.bits = bits;
      p.asymmetric = asym;
      p.block_size = 48;
      p.segment = 100;  // partial last block in each segment
      const std::size_t n = 400, k = 5;
      std::vector<QBuf> ins;
      std::vector<QuantizedCRef> refs;
      for (std::size_t i = 0; i < k; ++i) {
        ins.emplace_back(n, p);
        const auto x = random_normal(n, float(i + 1), std::uint32_t(40 + i));
        quantize(x.data(), DType::kF32, n, p, ins.back().ref());
      }
      for (const auto& b : ins) refs.push_back(b.cref());
      // Unfused: dequantize each to FP32, sum in input order.
      std::vector<float> sum(n, 0.0f), tmp(n);
      for (const auto& b : ins) {
        dequantize(b.cref(), n, p, tmp.data(), DType::kF32);
        for (std::size_t e = 0; e < n; ++e) sum[e] += tmp[e];
      }
      QBuf want(n, p), got(n, p);
      quantize(sum.data(), DType::kF32, n, p, want.ref());
      dequant_reduce_quantize(refs.data(), k, n, p, got.ref());
      CHECK(got.data == want.data);
      CHECK(got.scales == want.scales);
      if (asym) CHECK(got.offsets == want.offsets);

      std::vector<std::uint16_t> out(n);
      dequant_reduce(refs.data(), k, n, p, 0.25f, out.data(), DType::kF16);
      for (std::size_t e = 0; e < n; ++e) {
        CHECK(out[e] == detail::f32_to_f16_bits(sum[e] * 0.25f));
      }
    }
  }
}
