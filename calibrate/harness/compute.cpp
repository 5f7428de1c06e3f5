// Single-GPU timings on device 0 (or this MPI rank's GPU): cuBLAS BF16 GEMMs at transformer layer
// shapes plus a square sweep, device-to-device copy bandwidth, and the project's quantization
// kernels (kernels/quantize_cuda.hpp). Each is timed with CUDA events over a burst after warm-up,
// the burst held behind a gate until fully enqueued; time = burst / iterations, the GPU's time per
// launch. Kernel records count bytes read + written, which is what the
// CostProfile's throughput means. Copies and kernels run cold: the burst cycles through enough
// disjoint copies of the working set that every launch finds its data out of L2, as a training
// step's kernels do (a shard last touched by the optimizer, a bucket written a layer before).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <thread>

#include "calibrate/harness/check.hpp"
#include "calibrate/harness/cold_copies.hpp"
#include "calibrate/harness/harness.hpp"
#ifdef ZEROSIM_HAVE_CUDA_KERNELS
#include "kernels/quantize_cuda.hpp"
#endif

namespace zerosim::harness {

namespace {

// Holds a stream until released from the host: the timed burst is enqueued behind it, so the GPU
// runs the launches back to back and the events time the GPU's work, not the host's launch rate
// (nvbench's blocking-kernel method, done with a host function since the runtime API has no
// stream wait on a host flag).
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t s) {
    CUDA_CHECK(cudaLaunchHostFunc(s, &StreamGate::wait, &open_));
  }
  void release() { open_.store(true, std::memory_order_release); }
  ~StreamGate() { release(); }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

 private:
  static void CUDART_CB wait(void* flag) {
    auto* open = static_cast<std::atomic<bool>*>(flag);
    while (!open->load(std::memory_order_acquire)) std::this_thread::yield();
  }
  std::atomic<bool> open_{false};
};

// Times `body(c)` (enqueued on `s`) with CUDA events: warm-up, then iters launches held behind a
// StreamGate, launch i on copy c = i % copies of its working set; GPU seconds per launch.
double time_events(const Context& ctx, cudaStream_t s, const std::function<void(std::size_t)>& body,
                   std::size_t copies = 1) {
  std::size_t i = 0;
  for (int w = 0; w < ctx.opt.warmup; ++w) body(i++ % copies);
  cudaEvent_t a = nullptr, b = nullptr;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  {
    StreamGate gate(s);
    CUDA_CHECK(cudaEventRecord(a, s));
    for (int it = 0; it < ctx.opt.iters; ++it) body(i++ % copies);
    CUDA_CHECK(cudaEventRecord(b, s));
    gate.release();
  }
  CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return static_cast<double>(ms) * 1e-3 / ctx.opt.iters;
}

// The current device's L2 capacity in bytes.
std::size_t l2_bytes() {
  int dev = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  return static_cast<std::size_t>(l2);
}

struct Shape {
  std::int64_t m, n, k;
  std::string label;
};

}  // namespace

void run_gemm(Context& ctx) {
  std::vector<Shape> shapes;
  for (int h : ctx.opt.hidden)
    for (int t : ctx.opt.tokens) {
      shapes.push_back({t, 3LL * h, h, fmt::format("qkv h={} T={}", h, t)});
      shapes.push_back({t, h, h, fmt::format("attn_out h={} T={}", h, t)});
      shapes.push_back({t, 4LL * h, h, fmt::format("fc1 h={} T={}", h, t)});
      shapes.push_back({t, h, 4LL * h, fmt::format("fc2 h={} T={}", h, t)});
    }
  for (std::int64_t s = 128; s <= 16384; s *= 2)
    shapes.push_back({s, s, s, fmt::format("square {}", s)});
  std::size_t a_max = 0, b_max = 0, c_max = 0;
  for (const auto& s : shapes) {
    a_max = std::max<std::size_t>(a_max, static_cast<std::size_t>(s.m * s.k));
    b_max = std::max<std::size_t>(b_max, static_cast<std::size_t>(s.k * s.n));
    c_max = std::max<std::size_t>(c_max, static_cast<std::size_t>(s.m * s.n));
  }
  __nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr;
  CUDA_CHECK(cudaMalloc(&A, a_max * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&B, b_max * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&C, c_max * sizeof(__nv_bfloat16)));
  // Non-zero inputs (0x3C3C ~ 0.0115 in BF16): all-zero operands would draw less power than real
  // data.
  CUDA_CHECK(cudaMemset(A, 0x3C, a_max * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMemset(B, 0x3C, b_max * sizeof(__nv_bfloat16)));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetStream(h, s));
  const float one = 1.0f, zero = 0.0f;
  for (const auto& sh : shapes) {
    // Column-major C[m x n] = A[m x k] * B[k x n].
    // Hot: a GEMM's time is its arithmetic, and a layer's weights are read once per tile anyway.
    double t = time_events(ctx, s, [&](std::size_t) {
      CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(sh.m),
                                static_cast<int>(sh.n), static_cast<int>(sh.k), &one, A,
                                CUDA_R_16BF, static_cast<int>(sh.m), B, CUDA_R_16BF,
                                static_cast<int>(sh.k), &zero, C, CUDA_R_16BF,
                                static_cast<int>(sh.m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    double flops =
        2.0 * static_cast<double>(sh.m) * static_cast<double>(sh.n) * static_cast<double>(sh.k);
    ctx.record({{"kind", "gemm"},
                {"m", sh.m},
                {"n", sh.n},
                {"k", sh.k},
                {"time_s", t},
                {"dtype", "bf16"},
                {"label", sh.label}});
    std::printf("gemm %-24s %6lld x %6lld x %6lld %12.2f us %9.1f TFLOP/s\n", sh.label.c_str(),
                static_cast<long long>(sh.m), static_cast<long long>(sh.n),
                static_cast<long long>(sh.k), t * 1e6, flops / t / 1e12);
    std::fflush(stdout);
  }
  CUBLAS_CHECK(cublasDestroy(h));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
}

void run_copy(Context& ctx) {
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, ctx.opt.max_bytes));
  CUDA_CHECK(cudaMalloc(&dst, ctx.opt.max_bytes));
  CUDA_CHECK(cudaMemset(src, 1, ctx.opt.max_bytes));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (std::uint64_t bytes : sweep_sizes(ctx.opt, 256)) {
    auto* from = static_cast<const std::uint8_t*>(src);
    auto* to = static_cast<std::uint8_t*>(dst);
    double t = time_events(
        ctx, s,
        [&](std::size_t c) {
          CUDA_CHECK(cudaMemcpyAsync(to + c * bytes, from + c * bytes, bytes,
                                     cudaMemcpyDeviceToDevice, s));
        },
        cold_copies(2.0 * static_cast<double>(bytes), l2_bytes(), ctx.opt.max_bytes / bytes));
    // A copy reads and writes every byte.
    ctx.record({{"kind", "kernel"}, {"name", "copy"}, {"bytes", 2 * bytes}, {"time_s", t}});
    std::printf("copy %14llu B %12.2f us %9.1f GB/s (read + write)\n",
                static_cast<unsigned long long>(bytes), t * 1e6,
                2.0 * static_cast<double>(bytes) / t / 1e9);
    std::fflush(stdout);
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
}

#ifdef ZEROSIM_HAVE_CUDA_KERNELS
namespace {

namespace kc = zerosim::kernels::cuda;
using zerosim::kernels::DType;
using zerosim::kernels::QgzShape;
using zerosim::kernels::QuantizedCRef;
using zerosim::kernels::QuantizedRef;
using zerosim::kernels::QuantParams;
constexpr std::size_t kInputs = 8;  // dequant_reduce_quant: pieces from the 8 GPUs of a node
constexpr std::size_t kNodes = 2;   // dequant_reduce: pieces from 2 nodes

// The kernels' device buffers: FP16 input x and output y of n_max elements, and kInputs + 1
// quantized buffers (data qd, scales qs) of n_max elements (INT8 size bounds INT4).
struct KernelBuffers {
  std::size_t n_max = 0;
  void* x = nullptr;
  void* y = nullptr;
  std::vector<std::uint8_t*> qd;
  std::vector<float*> qs;
};

KernelBuffers alloc_kernel_buffers(std::size_t n_max) {
  KernelBuffers b;
  b.n_max = n_max;
  CUDA_CHECK(cudaMalloc(&b.x, n_max * 2));
  CUDA_CHECK(cudaMalloc(&b.y, n_max * 2));
  CUDA_CHECK(cudaMemset(b.x, 0x3C, n_max * 2));
  QuantParams p8{8, false, zerosim::kernels::kDefaultBlockSize, 0};
  std::size_t qbytes = zerosim::kernels::quantized_bytes(n_max, p8);
  std::size_t nblocks = zerosim::kernels::num_blocks(n_max, p8) + 16;
  b.qd.resize(kInputs + 1);
  b.qs.resize(kInputs + 1);
  for (std::size_t i = 0; i <= kInputs; ++i) {
    CUDA_CHECK(cudaMalloc(&b.qd[i], qbytes));
    CUDA_CHECK(cudaMalloc(&b.qs[i], nblocks * sizeof(float)));
    CUDA_CHECK(cudaMemset(b.qd[i], 0x11, qbytes));
    CUDA_CHECK(cudaMemset(b.qs[i], 0, nblocks * sizeof(float)));
  }
  return b;
}

void free_kernel_buffers(KernelBuffers& b) {
  for (std::size_t i = 0; i <= kInputs; ++i) {
    CUDA_CHECK(cudaFree(b.qd[i]));
    CUDA_CHECK(cudaFree(b.qs[i]));
  }
  CUDA_CHECK(cudaFree(b.x));
  CUDA_CHECK(cudaFree(b.y));
}

// Records one kernel timing and prints its line.
void emit_kernel(Context& ctx, const std::string& name, std::size_t n, double bytes, double t) {
  ctx.record({{"kind", "kernel"},
              {"name", name},
              {"bytes", static_cast<std::uint64_t>(bytes)},
              {"time_s", t},
              {"elements", n},
              {"dtype", "fp16"}});
  std::printf("kernel %-26s %12zu elems %12.2f us %9.1f GB/s\n", name.c_str(), n, t * 1e6,
              bytes / t / 1e9);
  std::fflush(stdout);
}

// Every kernel at n elements: (de)quantization at 8 and 4 bits, then qgZ's three kernels. Copy c
// of a working set starts c * n elements into each buffer (n is a multiple of the block size, so
// whole blocks and their scales shift together).
void time_kernels_at(Context& ctx, cudaStream_t s, const KernelBuffers& b, std::size_t n) {
  const QgzShape shape{kNodes, 8, 1};
  const std::size_t room = b.n_max / n;
  auto x = [&](std::size_t c) { return static_cast<std::uint8_t*>(b.x) + c * n * 2; };
  auto y = [&](std::size_t c) { return static_cast<std::uint8_t*>(b.y) + c * n * 2; };
  auto quantized = [&](std::size_t i, std::size_t c, const QuantParams& p) {
    return QuantizedRef{b.qd[i] + c * zerosim::kernels::quantized_bytes(n, p),
                        b.qs[i] + c * zerosim::kernels::num_blocks(n, p), nullptr};
  };
  auto timed = [&](const std::string& name, double bytes,
                   const std::function<void(std::size_t)>& body) {
    emit_kernel(ctx, name, n, bytes,
                time_events(ctx, s, body, cold_copies(bytes, l2_bytes(), room)));
  };
  for (int bits : {8, 4}) {
    QuantParams p{bits, false, zerosim::kernels::kDefaultBlockSize, 0};
    double q = static_cast<double>(zerosim::kernels::quantized_bytes(n, p) +
                                   zerosim::kernels::num_blocks(n, p) * sizeof(float));
    timed(fmt::format("quantize_int{}", bits), 2.0 * n + q,
          [&](std::size_t c) { kc::quantize(x(c), DType::kF16, n, p, quantized(0, c, p), s); });
    timed(fmt::format("dequantize_int{}", bits), q + 2.0 * n, [&](std::size_t c) {
      const QuantizedRef in = quantized(0, c, p);
      kc::dequantize({in.data, in.scales, nullptr}, n, p, y(c), DType::kF16, s);
    });
  }
  QuantParams p4{4, false, zerosim::kernels::kDefaultBlockSize, 0};
  QuantParams p4u = p4;
  p4u.segment = zerosim::kernels::qgz_unit_elements(n, shape);
  double q4 = static_cast<double>(zerosim::kernels::quantized_bytes(n, p4u) +
                                  zerosim::kernels::num_blocks(n, p4u) * sizeof(float));
  auto inputs = [&](std::size_t c) {
    std::vector<QuantizedCRef> ins;
    for (std::size_t i = 0; i < kInputs; ++i) {
      const QuantizedRef r = quantized(i, c, p4u);
      ins.push_back({r.data, r.scales, nullptr});
    }
    return ins;
  };
  timed("swizzle_quantize_int4", 2.0 * n + q4, [&](std::size_t c) {
    kc::qgz_swizzle_quantize(x(c), DType::kF16, n, shape, p4, quantized(0, c, p4u), s);
  });
  timed("dequant_reduce_quant_int4", (kInputs + 1) * q4, [&](std::size_t c) {
    const auto ins = inputs(c);
    kc::dequant_reduce_quantize(ins.data(), kInputs, n, p4u, quantized(kInputs, c, p4u), s);
  });
  timed("dequant_reduce_int4", kNodes * q4 + 2.0 * n, [&](std::size_t c) {
    const auto ins = inputs(c);
    kc::dequant_reduce(ins.data(), kNodes, n, p4u, 1.0f, y(c), DType::kF16, s);
  });
}

}  // namespace
#endif

void run_kernels(Context& ctx) {
#ifdef ZEROSIM_HAVE_CUDA_KERNELS
  // Elements: FP16 input bytes / 2, a multiple of 2 * W * block so every qgZ unit holds whole
  // blocks.
  const std::size_t align = 2 * 16 * zerosim::kernels::kDefaultBlockSize;
  std::size_t n_max =
      std::max(align, static_cast<std::size_t>(ctx.opt.max_bytes / 2) / align * align);
  KernelBuffers buffers = alloc_kernel_buffers(n_max);
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (std::uint64_t in_bytes : sweep_sizes(ctx.opt, 2 * align)) {
    std::size_t n = static_cast<std::size_t>(in_bytes / 2);
    if (n > n_max) break;
    time_kernels_at(ctx, s, buffers, n);
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  free_kernel_buffers(buffers);
#else
  (void)ctx;
  std::printf("kernels: skipped: this zerosim-calibrate was built without zerosim_kernels_cuda\n");
#endif
}

}  // namespace zerosim::harness
