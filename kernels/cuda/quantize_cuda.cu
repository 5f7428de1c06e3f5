// CUDA kernels and host API of kernels/quantize_cuda.hpp. Validation is the CPU reference's
// (kernels/ref/checks.hpp), so both reject the same arguments with the same messages.
#include <stdexcept>
#include <string>

#include "kernels/cuda/quantize_kernels.cuh"
#include "kernels/quantize_cuda.hpp"
#include "kernels/ref/checks.hpp"

namespace zerosim::kernels::cuda {
namespace {

using dev::BlockPos;
using dev::Geo;
using dev::kChunk;
using dev::kThreads;

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             cudaGetErrorString(e));
  }
}
#define ZS_CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)

Geo make_geo(std::size_t n, const QuantParams& p) {
  const std::size_t seg = segment_elements(n, p);
  return {n, seg, p.block_size, num_blocks(seg, p), quantized_bytes(seg, p)};
}

// Pointer tables for the reduce kernels, passed by value as a kernel parameter (< 4 KiB).
struct Inputs {
  const std::uint8_t* data[dev::kMaxInputs];
  const float* scales[dev::kMaxInputs];
  const float* offsets[dev::kMaxInputs];
  int count;
};

// Optional qgZ reorder of the source: unit k of the output reads from qgz_source(k).
struct Swizzle {
  bool on;
  std::size_t nodes, gpus, unit;
};

// Shared memory for a block between quantize_block's passes: none for a block its threads hold in
// registers, none beyond kMaxCachedBlock (produced again instead).
std::size_t cache_bytes(const QuantParams& p) {
  if (p.block_size <= dev::kGroupStride || p.block_size > dev::kMaxCachedBlock) return 0;
  return (p.block_size + kChunk) * sizeof(float);
}

template <DType D, int BITS, bool ASYM>
__global__ void __launch_bounds__(kThreads, dev::kMinBlocks)
    quantize_kernel(const void* in, Geo g, Swizzle sw, std::uint8_t* q, float* scales,
                    float* offsets, bool use_cache) {
  extern __shared__ float cache[];
  const std::size_t blk = blockIdx.x;
  const BlockPos pos = dev::block_pos(g, blk, BITS);
  std::size_t src = pos.first;
  if (sw.on)
    src = detail::qgz_source(pos.first / sw.unit, g.n, sw.nodes, sw.gpus, sw.unit) +
          pos.first % sw.unit;
  auto produce = [in, src](std::size_t c8, int cnt, float(&v)[kChunk]) {
    dev::load_chunk<D>(in, src + c8, cnt, v);
  };
  dev::quantize_block<BITS, ASYM>(produce, pos.len, use_cache ? cache : nullptr, q + pos.byte,
                                  scales + blk, ASYM ? offsets + blk : nullptr);
}

template <DType D, int BITS, bool ASYM>
__global__ void __launch_bounds__(kThreads, dev::kMinBlocks)
    dequantize_kernel(const std::uint8_t* q, const float* scales, const float* offsets, Geo g,
                      void* out) {
  const std::size_t blk = blockIdx.x;
  const BlockPos pos = dev::block_pos(g, blk, BITS);
  const float scale = scales[blk];
  const float offset = ASYM ? offsets[blk] : 0.0f;
  dev::map_block(
      pos.len,
      [&](std::size_t c8, int cnt, float(&v)[kChunk]) {
        dev::decode_chunk<BITS, ASYM>(q + pos.byte, c8, cnt, scale, offset, v);
      },
      [&](std::size_t c8, int cnt, const float(&v)[kChunk]) {
        dev::store_chunk<D>(out, pos.first + c8, cnt, v);
      });
}

// FP32 sum over inputs (in input order) of the chunk at c8 of block blk.
template <int BITS, bool ASYM>
__device__ __forceinline__ void reduce_chunk(const Inputs& in, const float* s_scale,
                                             const float* s_offset, std::size_t byte,
                                             std::size_t c8, int cnt, float (&sum)[kChunk]) {
#pragma unroll
  for (int e = 0; e < kChunk; ++e) sum[e] = 0.0f;
  for (int k = 0; k < in.count; ++k) {
    float v[kChunk];
    dev::decode_chunk<BITS, ASYM>(in.data[k] + byte, c8, cnt, s_scale[k], s_offset[k], v);
#pragma unroll
    for (int e = 0; e < kChunk; ++e) sum[e] = detail::fadd(sum[e], e < cnt ? v[e] : 0.0f);
  }
}

template <int BITS, bool ASYM>
__device__ __forceinline__ void load_block_params(const Inputs& in, std::size_t blk, float* s_scale,
                                                  float* s_offset) {
  for (int k = threadIdx.x; k < in.count; k += kThreads) {
    s_scale[k] = in.scales[k][blk];
    s_offset[k] = ASYM ? in.offsets[k][blk] : 0.0f;
  }
  __syncthreads();
}

template <int BITS, bool ASYM>
__global__ void __launch_bounds__(kThreads, dev::kMinBlocks)
    dequant_reduce_quantize_kernel(Inputs in, Geo g, std::uint8_t* q, float* scales, float* offsets,
                                   bool use_cache) {
  extern __shared__ float cache[];
  __shared__ float s_scale[dev::kMaxInputs], s_offset[dev::kMaxInputs];
  const std::size_t blk = blockIdx.x;
  const BlockPos pos = dev::block_pos(g, blk, BITS);
  load_block_params<BITS, ASYM>(in, blk, s_scale, s_offset);
  auto produce = [&in, pos](std::size_t c8, int cnt, float(&v)[kChunk]) {
    reduce_chunk<BITS, ASYM>(in, s_scale, s_offset, pos.byte, c8, cnt, v);
  };
  dev::quantize_block<BITS, ASYM>(produce, pos.len, use_cache ? cache : nullptr, q + pos.byte,
                                  scales + blk, ASYM ? offsets + blk : nullptr);
}

template <DType D, int BITS, bool ASYM>
__global__ void __launch_bounds__(kThreads, dev::kMinBlocks)
    dequant_reduce_kernel(Inputs in, Geo g, float post_scale, void* out) {
  __shared__ float s_scale[dev::kMaxInputs], s_offset[dev::kMaxInputs];
  const std::size_t blk = blockIdx.x;
  const BlockPos pos = dev::block_pos(g, blk, BITS);
  load_block_params<BITS, ASYM>(in, blk, s_scale, s_offset);
  dev::map_block(
      pos.len,
      [&](std::size_t c8, int cnt, float(&v)[kChunk]) {
        reduce_chunk<BITS, ASYM>(in, s_scale, s_offset, pos.byte, c8, cnt, v);
#pragma unroll
        for (int e = 0; e < kChunk; ++e) v[e] = detail::fmul(v[e], post_scale);
      },
      [&](std::size_t c8, int cnt, const float(&v)[kChunk]) {
        dev::store_chunk<D>(out, pos.first + c8, cnt, v);
      });
}

// ---- host-side dispatch ------------------------------------------------------------------------
template <class F>
void dispatch_bits(const QuantParams& p, F&& f) {
  if (p.bits == 8) {
    if (p.asymmetric)
      f.template operator()<8, true>();
    else
      f.template operator()<8, false>();
  } else {
    if (p.asymmetric)
      f.template operator()<4, true>();
    else
      f.template operator()<4, false>();
  }
}

template <class F>
void dispatch_all(DType t, const QuantParams& p, F&& f) {
  dispatch_bits(p, [&]<int BITS, bool ASYM>() {
    switch (t) {
      case DType::kF16:
        f.template operator()<DType::kF16, BITS, ASYM>();
        break;
      case DType::kBF16:
        f.template operator()<DType::kBF16, BITS, ASYM>();
        break;
      case DType::kF32:
      default:
        f.template operator()<DType::kF32, BITS, ASYM>();
        break;
    }
  });
}

unsigned grid_of(const char* fn, std::size_t n, const QuantParams& p) {
  const std::size_t blocks = num_blocks(n, p);
  if (blocks > 0x7FFFFFFFu)
    ref::bad_arg(fn, "too many blocks for one launch (" + std::to_string(blocks) + ")");
  return static_cast<unsigned>(blocks);
}

Inputs make_inputs(const char* fn, const QuantizedCRef* inputs, std::size_t n_inputs) {
  if (n_inputs > kMaxReduceInputs) {
    ref::bad_arg(fn, "n_inputs must be <= " + std::to_string(kMaxReduceInputs) + " (got " +
                         std::to_string(n_inputs) + ")");
  }
  Inputs in{};
  in.count = static_cast<int>(n_inputs);
  for (std::size_t k = 0; k < n_inputs; ++k) {
    in.data[k] = inputs[k].data;
    in.scales[k] = inputs[k].scales;
    in.offsets[k] = inputs[k].offsets;
  }
  return in;
}

void launch_quantize(const char* fn, const void* in, DType t, std::size_t n, const QuantParams& p,
                     const Swizzle& sw, QuantizedRef out, cudaStream_t stream) {
  const unsigned grid = grid_of(fn, n, p);
  if (grid == 0) return;
  const std::size_t smem = cache_bytes(p);
  const Geo g = make_geo(n, p);
  dispatch_all(t, p, [&]<DType D, int BITS, bool ASYM>() {
    quantize_kernel<D, BITS, ASYM>
        <<<grid, kThreads, smem, stream>>>(in, g, sw, out.data, out.scales, out.offsets, smem != 0);
  });
  ZS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void quantize(const void* in, DType t, std::size_t n, const QuantParams& p, QuantizedRef out,
              cudaStream_t stream) {
  static constexpr const char* kFn = "zerosim::kernels::cuda::quantize";
  ref::check_quantize_args(kFn, in, n, p, out);
  launch_quantize(kFn, in, t, n, p, Swizzle{false, 1, 1, 1}, out, stream);
}

void qgz_swizzle_quantize(const void* grad, DType t, std::size_t n, const QgzShape& s,
                          const QuantParams& p, QuantizedRef out, cudaStream_t stream) {
  static constexpr const char* kFn = "zerosim::kernels::cuda::qgz_swizzle_quantize";
  validate_qgz(kFn, n, s, p);
  QuantParams up = p;
  up.segment = qgz_unit_elements(n, s);
  ref::check_quantize_args(kFn, grad, n, up, out);
  if (n == 0) return;
  launch_quantize(kFn, grad, t, n, up, Swizzle{true, s.nodes, s.gpus_per_node, up.segment}, out,
                  stream);
}

void dequantize(QuantizedCRef in, std::size_t n, const QuantParams& p, void* out, DType t,
                cudaStream_t stream) {
  static constexpr const char* kFn = "zerosim::kernels::cuda::dequantize";
  validate(kFn, n, p);
  ref::check_in(kFn, n, p, in, "input");
  if (n != 0 && out == nullptr) ref::bad_arg(kFn, "output buffer is null");
  const unsigned grid = grid_of(kFn, n, p);
  if (grid == 0) return;
  const Geo g = make_geo(n, p);
  dispatch_all(t, p, [&]<DType D, int BITS, bool ASYM>() {
    dequantize_kernel<D, BITS, ASYM>
        <<<grid, kThreads, 0, stream>>>(in.data, in.scales, in.offsets, g, out);
  });
  ZS_CUDA_CHECK(cudaGetLastError());
}

void dequant_reduce_quantize(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                             const QuantParams& p, QuantizedRef out, cudaStream_t stream) {
  static constexpr const char* kFn = "zerosim::kernels::cuda::dequant_reduce_quantize";
  ref::check_inputs(kFn, inputs, n_inputs, n, p);
  ref::check_quantize_args(kFn, n == 0 ? nullptr : inputs, n, p, out);
  const Inputs in = make_inputs(kFn, inputs, n_inputs);
  const unsigned grid = grid_of(kFn, n, p);
  if (grid == 0) return;
  const std::size_t smem = cache_bytes(p);
  const Geo g = make_geo(n, p);
  dispatch_bits(p, [&]<int BITS, bool ASYM>() {
    dequant_reduce_quantize_kernel<BITS, ASYM>
        <<<grid, kThreads, smem, stream>>>(in, g, out.data, out.scales, out.offsets, smem != 0);
  });
  ZS_CUDA_CHECK(cudaGetLastError());
}

void dequant_reduce(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                    const QuantParams& p, float post_scale, void* out, DType t,
                    cudaStream_t stream) {
  static constexpr const char* kFn = "zerosim::kernels::cuda::dequant_reduce";
  ref::check_inputs(kFn, inputs, n_inputs, n, p);
  if (n != 0 && out == nullptr) ref::bad_arg(kFn, "output buffer is null");
  const Inputs in = make_inputs(kFn, inputs, n_inputs);
  const unsigned grid = grid_of(kFn, n, p);
  if (grid == 0) return;
  const Geo g = make_geo(n, p);
  dispatch_all(t, p, [&]<DType D, int BITS, bool ASYM>() {
    dequant_reduce_kernel<D, BITS, ASYM><<<grid, kThreads, 0, stream>>>(in, g, post_scale, out);
  });
  ZS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zerosim::kernels::cuda
