// GPU benchmark of the quantization kernels (Google Benchmark, timed with CUDA events).
// Reports GB/s counting bytes read + written (input, codes, scales, offsets, output) and HBM_frac,
// the fraction of the device's peak memory bandwidth = 2 x memory clock x bus width (queried from
// the device; override with ZEROSIM_HBM_GBPS=<GB/s>). Issue 4's target: HBM_frac >= 0.8 for
// quantize / dequantize of >= 64 MiB on H100/H200.
//   build/kernels/bench_kernels_gpu --benchmark_filter=Quantize --benchmark_min_time=0.5
// Without a device it prints "SKIPPED: no CUDA device" and exits 0.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/quantize.hpp"
#include "kernels/quantize_cuda.hpp"

using namespace zerosim::kernels;

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

double hbm_peak_bytes_per_s() {
  if (const char* env = std::getenv("ZEROSIM_HBM_GBPS")) return std::atof(env) * 1e9;
  int dev = 0, clock_khz = 0, bus_bits = 0;
  ck(cudaGetDevice(&dev), "cudaGetDevice");
  ck(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev), "memory clock");
  ck(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev), "bus width");
  return 2.0 * double(clock_khz) * 1e3 * double(bus_bits) / 8.0;  // DDR: two transfers per clock
}

struct DevMem {
  void* p = nullptr;
  explicit DevMem(std::size_t bytes) {
    ck(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    ck(cudaMemset(p, 0, bytes ? bytes : 1), "cudaMemset");
  }
  ~DevMem() { cudaFree(p); }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  template <class T = std::uint8_t>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// Device input of n elements of type t filled with a smooth non-constant pattern.
struct DevInput {
  DevMem mem;
  DevInput(std::size_t n, DType t) : mem(n * dtype_bytes(t)) {
    // Quantize-then-dequantize a pattern from the host once so the data are realistic (not zeros).
    std::vector<float> host(1 << 16);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(int(i % 1021) - 510) * 1e-3f;
    DevMem tmp(host.size() * 4);
    ck(cudaMemcpy(tmp.p, host.data(), host.size() * 4, cudaMemcpyHostToDevice), "upload");
    QuantParams p;
    DevMem q(quantized_bytes(host.size(), p)), s(num_blocks(host.size(), p) * 4);
    cuda::quantize(tmp.p, DType::kF32, host.size(), p, {q.as(), s.as<float>(), nullptr}, nullptr);
    auto* out = mem.as();
    for (std::size_t off = 0; off < n; off += host.size()) {
      const std::size_t cnt = std::min(host.size(), n - off);
      cuda::dequantize({q.as(), s.as<float>(), nullptr}, cnt, p, out + off * dtype_bytes(t), t,
                       nullptr);
    }
    ck(cudaDeviceSynchronize(), "init");
  }
};

struct DevQ {
  DevMem data, scales, offsets;
  DevQ(std::size_t n, const QuantParams& p)
      : data(quantized_bytes(n, p)),
        scales(num_blocks(n, p) * 4),
        offsets(p.asymmetric ? num_blocks(n, p) * 4 : 0) {}
  QuantizedRef ref() { return {data.as(), scales.as<float>(), offsets.as<float>()}; }
  QuantizedCRef cref() const { return {data.as(), scales.as<float>(), offsets.as<float>()}; }
};

std::size_t qbytes(std::size_t n, const QuantParams& p) {
  return quantized_bytes(n, p) + num_blocks(n, p) * 4 * (p.asymmetric ? 2 : 1);
}

// Times `launch` with CUDA events; sets GB/s and HBM_frac from `bytes` per launch.
template <class F>
void run_timed(benchmark::State& state, std::size_t bytes, F&& launch) {
  cudaEvent_t start, stop;
  ck(cudaEventCreate(&start), "event");
  ck(cudaEventCreate(&stop), "event");
  launch();  // warm-up
  ck(cudaDeviceSynchronize(), "warm-up");
  double total_s = 0.0;
  for (auto _ : state) {
    ck(cudaEventRecord(start, nullptr), "record");
    launch();
    ck(cudaEventRecord(stop, nullptr), "record");
    ck(cudaEventSynchronize(stop), "sync");
    float ms = 0.0f;
    ck(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    state.SetIterationTime(double(ms) * 1e-3);
    total_s += double(ms) * 1e-3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double bps = double(bytes) * double(state.iterations()) / total_s;
  state.SetBytesProcessed(std::int64_t(bytes) * state.iterations());
  state.counters["GB/s"] = bps / 1e9;
  state.counters["HBM_frac"] = bps / hbm_peak_bytes_per_s();
  state.counters["MiB_in"] = double(state.range(0));
}

QuantParams params_of(const benchmark::State& state) {
  QuantParams p;
  p.bits = int(state.range(2));
  p.asymmetric = state.range(3) != 0;
  p.block_size = kDefaultBlockSize;
  return p;
}

// Args: {MiB of unquantized data, dtype (0 f32, 1 f16, 2 bf16), bits, asymmetric}.
DType dtype_of(const benchmark::State& state) { return DType(state.range(1)); }
std::size_t elems_of(const benchmark::State& state) {
  return std::size_t(state.range(0)) * (1u << 20) / dtype_bytes(dtype_of(state));
}

void BM_Quantize(benchmark::State& state) {
  const DType t = dtype_of(state);
  const std::size_t n = elems_of(state);
  const QuantParams p = params_of(state);
  DevInput in(n, t);
  DevQ q(n, p);
  run_timed(state, n * dtype_bytes(t) + qbytes(n, p),
            [&] { cuda::quantize(in.mem.p, t, n, p, q.ref(), nullptr); });
}

void BM_Dequantize(benchmark::State& state) {
  const DType t = dtype_of(state);
  const std::size_t n = elems_of(state);
  const QuantParams p = params_of(state);
  DevInput in(n, t);
  DevQ q(n, p);
  cuda::quantize(in.mem.p, t, n, p, q.ref(), nullptr);
  DevMem out(n * dtype_bytes(t));
  run_timed(state, qbytes(n, p) + n * dtype_bytes(t),
            [&] { cuda::dequantize(q.cref(), n, p, out.p, t, nullptr); });
}

// qgZ step 1 on a 4 x 8 cluster.
void BM_QgzSwizzleQuantize(benchmark::State& state) {
  const DType t = dtype_of(state);
  const QgzShape s{4, 8, 1};
  const std::size_t n = elems_of(state) / 64 * 64;
  const QuantParams p = params_of(state);
  QuantParams pu = p;
  pu.segment = qgz_unit_elements(n, s);
  DevInput in(n, t);
  DevQ q(n, pu);
  run_timed(state, n * dtype_bytes(t) + qbytes(n, pu),
            [&] { cuda::qgz_swizzle_quantize(in.mem.p, t, n, s, p, q.ref(), nullptr); });
}

// qgZ step 2 on a node of 8 GPUs: a gradient of MiB_in arrives as 8 quantized pieces of 1/8 of
// its elements each (one per local GPU), reduced and re-quantized.
void BM_DequantReduceQuantize(benchmark::State& state) {
  const DType t = dtype_of(state);
  const std::size_t n = elems_of(state) / 8, k = 8;
  const QuantParams p = params_of(state);
  DevInput in(n, t);
  std::deque<DevQ> pieces;
  std::vector<QuantizedCRef> refs;
  for (std::size_t i = 0; i < k; ++i) pieces.emplace_back(n, p);
  for (auto& q : pieces) {
    cuda::quantize(in.mem.p, t, n, p, q.ref(), nullptr);
    refs.push_back(q.cref());
  }
  DevQ out(n, p);
  run_timed(state, (k + 1) * qbytes(n, p),
            [&] { cuda::dequant_reduce_quantize(refs.data(), k, n, p, out.ref(), nullptr); });
}

// qgZ step 3: 4 received pieces reduced into the output dtype (mean).
void BM_DequantReduce(benchmark::State& state) {
  const DType t = dtype_of(state);
  const std::size_t n = elems_of(state), k = 4;
  const QuantParams p = params_of(state);
  DevInput in(n, t);
  std::deque<DevQ> pieces;
  std::vector<QuantizedCRef> refs;
  for (std::size_t i = 0; i < k; ++i) pieces.emplace_back(n, p);
  for (auto& q : pieces) {
    cuda::quantize(in.mem.p, t, n, p, q.ref(), nullptr);
    refs.push_back(q.cref());
  }
  DevMem out(n * dtype_bytes(t));
  run_timed(state, k * qbytes(n, p) + n * dtype_bytes(t),
            [&] { cuda::dequant_reduce(refs.data(), k, n, p, 0.25f, out.p, t, nullptr); });
}

// Sweeps as data: sizes 64 and 256 MiB; FP16 and BF16 (FP32 at 64 MiB); INT8 and INT4; symmetric
// (DeepSpeed's default) plus an asymmetric INT8 point.
void sweep(benchmark::internal::Benchmark* b) {
  for (int mib : {64, 256}) {
    for (int dt : {1, 2}) {
      for (int bits : {8, 4}) b->Args({mib, dt, bits, 0});
    }
    b->Args({mib, 1, 8, 1});
  }
  b->Args({64, 0, 8, 0});
  b->Args({64, 0, 4, 0});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Quantize)->Apply(sweep);
BENCHMARK(BM_Dequantize)->Apply(sweep);
BENCHMARK(BM_QgzSwizzleQuantize)
    ->Args({64, 1, 4, 0})
    ->Args({256, 1, 4, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DequantReduceQuantize)
    ->Args({64, 1, 4, 0})
    ->Args({256, 1, 4, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DequantReduce)
    ->Args({64, 1, 4, 0})
    ->Args({256, 1, 4, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return 0;
  }
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("device: %s, HBM peak %.0f GB/s (2 x memory clock x bus width)\n", prop.name,
              hbm_peak_bytes_per_s() / 1e9);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
