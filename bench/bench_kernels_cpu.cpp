// Speed of the CPU reference quantization kernels (single thread). bytes_per_second counts bytes
// read + written: unquantized input/output, codes, scales (and offsets).
//   build/bench/bench_kernels_cpu --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/quant_math.hpp"
#include "kernels/quantize.hpp"

using namespace zerosim::kernels;

namespace {

// Args: {elements, dtype (0 f32, 1 f16, 2 bf16), bits}.
struct Setup {
  std::size_t n;
  DType t;
  QuantParams p;
  std::vector<std::uint8_t> in, data;
  std::vector<float> scales;
  explicit Setup(const benchmark::State& s) : n(std::size_t(s.range(0))), t(DType(s.range(1))) {
    p.bits = int(s.range(2));
    in.resize(n * dtype_bytes(t));
    for (std::size_t i = 0; i < n; ++i) {
      const float v = float(int(i % 1021) - 510) * 1e-3f;
      if (t == DType::kF32) {
        std::memcpy(&in[4 * i], &v, 4);
      } else {
        const std::uint16_t h =
            t == DType::kF16 ? detail::f32_to_f16_bits(v) : detail::f32_to_bf16_bits(v);
        std::memcpy(&in[2 * i], &h, 2);
      }
    }
    data.resize(quantized_bytes(n, p));
    scales.resize(num_blocks(n, p));
  }
  std::size_t qbytes() const { return data.size() + scales.size() * 4; }
};

void BM_CpuQuantize(benchmark::State& state) {
  Setup s(state);
  for (auto _ : state) {
    quantize(s.in.data(), s.t, s.n, s.p, {s.data.data(), s.scales.data(), nullptr});
    benchmark::DoNotOptimize(s.data.data());
  }
  state.SetBytesProcessed(std::int64_t(s.in.size() + s.qbytes()) * state.iterations());
}

void BM_CpuDequantize(benchmark::State& state) {
  Setup s(state);
  quantize(s.in.data(), s.t, s.n, s.p, {s.data.data(), s.scales.data(), nullptr});
  std::vector<std::uint8_t> out(s.in.size());
  for (auto _ : state) {
    dequantize({s.data.data(), s.scales.data(), nullptr}, s.n, s.p, out.data(), s.t);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(s.in.size() + s.qbytes()) * state.iterations());
}

void BM_CpuQgzSwizzleQuantize(benchmark::State& state) {
  Setup s(state);
  const QgzShape shape{4, 8, 1};
  QuantParams pu = s.p;
  pu.segment = qgz_unit_elements(s.n, shape);
  s.scales.resize(num_blocks(s.n, pu));
  for (auto _ : state) {
    qgz_swizzle_quantize(s.in.data(), s.t, s.n, shape, s.p,
                         {s.data.data(), s.scales.data(), nullptr});
    benchmark::DoNotOptimize(s.data.data());
  }
  state.SetBytesProcessed(std::int64_t(s.in.size() + s.qbytes()) * state.iterations());
}

// 8 pieces of n / 8 elements reduced and re-quantized (qgZ step 2 on an 8-GPU node).
void BM_CpuDequantReduceQuantize(benchmark::State& state) {
  Setup s(state);
  const std::size_t k = 8, m = s.n / k;
  quantize(s.in.data(), s.t, s.n, s.p, {s.data.data(), s.scales.data(), nullptr});
  std::vector<QuantizedCRef> ins;
  for (std::size_t i = 0; i < k; ++i) {
    ins.push_back({s.data.data() + i * quantized_bytes(m, s.p),
                   s.scales.data() + i * num_blocks(m, s.p), nullptr});
  }
  std::vector<std::uint8_t> out(quantized_bytes(m, s.p));
  std::vector<float> out_s(num_blocks(m, s.p));
  for (auto _ : state) {
    dequant_reduce_quantize(ins.data(), k, m, s.p, {out.data(), out_s.data(), nullptr});
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(s.qbytes() + out.size() + out_s.size() * 4) *
                          state.iterations());
}

// 4 M elements = 8 MiB of FP16; FP16/BF16/FP32 x INT8/INT4.
void sweep(benchmark::internal::Benchmark* b) {
  for (int dt : {1, 2, 0}) {
    for (int bits : {8, 4}) b->Args({1 << 22, dt, bits});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_CpuQuantize)->Apply(sweep);
BENCHMARK(BM_CpuDequantize)->Apply(sweep);
BENCHMARK(BM_CpuQgzSwizzleQuantize)->Args({1 << 22, 1, 4})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuDequantReduceQuantize)->Args({1 << 22, 1, 4})->Unit(benchmark::kMillisecond);

}  // namespace
