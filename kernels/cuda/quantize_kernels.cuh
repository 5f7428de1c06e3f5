// Device side of the quantization kernels (internal to zerosim_kernels_cuda).
//
// Design for bandwidth: one CTA per quantization block, each thread moves chunks of 8 elements
// with the widest aligned access available (16-byte loads of FP16/BF16, 2 x 16 bytes of FP32,
// 8-byte INT8 / 4-byte INT4 code stores); misaligned or partial chunks fall back to scalar access.
// The block's values are read once from HBM: pass 1 (absmax or min/max) keeps them in shared
// memory for pass 2 (quantize) when the block fits (<= 8192 elements), else pass 2 re-reads them
// (an L2 hit). The scalar arithmetic is kernels/quant_math.hpp, shared with the CPU reference.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/quant_math.hpp"
#include "kernels/quantize.hpp"

namespace zerosim::kernels::cuda::dev {

inline constexpr int kThreads = 256;
inline constexpr int kChunk = 8;                      // elements per thread step
inline constexpr std::size_t kMaxCachedBlock = 8192;  // elements kept in shared memory
inline constexpr int kMaxInputs = 128;

// Where a CTA's block lives: tensor of n elements in segments of seg, blocks of bs.
struct Geo {
  std::size_t n, seg, bs, blocks_per_seg, seg_bytes;
};

struct BlockPos {
  std::size_t first;  // first element (in the quantized/output layout)
  std::size_t len;    // elements in this block
  std::size_t byte;   // first code byte
};

__device__ __forceinline__ BlockPos block_pos(const Geo& g, std::size_t blk, int bits) {
  const std::size_t s = blk / g.blocks_per_seg, b = blk % g.blocks_per_seg;
  const std::size_t off = b * g.bs;
  const std::size_t len = off + g.bs <= g.seg ? g.bs : g.seg - off;
  return {s * g.seg + off, len, s * g.seg_bytes + off * static_cast<std::size_t>(bits) / 8};
}

// ---- aligned-if-possible byte moves ------------------------------------------------------------
template <int B>
struct Bytes {
  std::uint8_t b[B];
};

template <int B>
__device__ __forceinline__ Bytes<B> load_bytes(const std::uint8_t* p) {
  Bytes<B> r;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if constexpr (B == 16) {
    if ((a & 15u) == 0) {
      const uint4 v = *reinterpret_cast<const uint4*>(p);
      memcpy(r.b, &v, 16);
      return r;
    }
  } else if constexpr (B == 8) {
    if ((a & 7u) == 0) {
      const uint2 v = *reinterpret_cast<const uint2*>(p);
      memcpy(r.b, &v, 8);
      return r;
    }
  } else if constexpr (B == 4) {
    if ((a & 3u) == 0) {
      const unsigned v = *reinterpret_cast<const unsigned*>(p);
      memcpy(r.b, &v, 4);
      return r;
    }
  } else if constexpr (B == 2) {
    if ((a & 1u) == 0) {
      const unsigned short v = *reinterpret_cast<const unsigned short*>(p);
      memcpy(r.b, &v, 2);
      return r;
    }
  }
#pragma unroll
  for (int i = 0; i < B; ++i) r.b[i] = p[i];
  return r;
}

template <int B>
__device__ __forceinline__ void store_bytes(std::uint8_t* p, const Bytes<B>& r) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if constexpr (B == 16) {
    if ((a & 15u) == 0) {
      uint4 v;
      memcpy(&v, r.b, 16);
      *reinterpret_cast<uint4*>(p) = v;
      return;
    }
  } else if constexpr (B == 8) {
    if ((a & 7u) == 0) {
      uint2 v;
      memcpy(&v, r.b, 8);
      *reinterpret_cast<uint2*>(p) = v;
      return;
    }
  } else if constexpr (B == 4) {
    if ((a & 3u) == 0) {
      unsigned v;
      memcpy(&v, r.b, 4);
      *reinterpret_cast<unsigned*>(p) = v;
      return;
    }
  } else if constexpr (B == 2) {
    if ((a & 1u) == 0) {
      unsigned short v;
      memcpy(&v, r.b, 2);
      *reinterpret_cast<unsigned short*>(p) = v;
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < B; ++i) p[i] = r.b[i];
}

// ---- typed element access ----------------------------------------------------------------------
template <DType D>
struct Elem;
template <>
struct Elem<DType::kF32> {
  static constexpr int kBytes = 4;
  __device__ static float from_bits(const std::uint8_t* b) {
    float f;
    memcpy(&f, b, 4);
    return f;
  }
  __device__ static void to_bits(float v, std::uint8_t* b) { memcpy(b, &v, 4); }
};
template <>
struct Elem<DType::kF16> {
  static constexpr int kBytes = 2;
  __device__ static float from_bits(const std::uint8_t* b) {
    __half h;
    memcpy(&h, b, 2);
    return __half2float(h);
  }
  __device__ static void to_bits(float v, std::uint8_t* b) {
    const __half h = __float2half_rn(v);
    memcpy(b, &h, 2);
  }
};
template <>
struct Elem<DType::kBF16> {
  static constexpr int kBytes = 2;
  __device__ static float from_bits(const std::uint8_t* b) {
    __nv_bfloat16 h;
    memcpy(&h, b, 2);
    return __bfloat162float(h);
  }
  __device__ static void to_bits(float v, std::uint8_t* b) {
    const __nv_bfloat16 h = __float2bfloat16_rn(v);
    memcpy(b, &h, 2);
  }
};

// Loads cnt (<= 8) elements starting at element i of x into v.
template <DType D>
__device__ __forceinline__ void load_chunk(const void* x, std::size_t i, int cnt,
                                           float (&v)[kChunk]) {
  using E = Elem<D>;
  const auto* p = static_cast<const std::uint8_t*>(x) + i * E::kBytes;
  if (cnt == kChunk) {
#pragma unroll
    for (int h = 0; h < E::kBytes * kChunk / 16; ++h) {
      const Bytes<16> b = load_bytes<16>(p + 16 * h);
#pragma unroll
      for (int e = 0; e < 16 / E::kBytes; ++e)
        v[h * (16 / E::kBytes) + e] = E::from_bits(b.b + e * E::kBytes);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (e < cnt) v[e] = E::from_bits(p + e * E::kBytes);
  }
}

template <DType D>
__device__ __forceinline__ void store_chunk(void* y, std::size_t i, int cnt,
                                            const float (&v)[kChunk]) {
  using E = Elem<D>;
  auto* p = static_cast<std::uint8_t*>(y) + i * E::kBytes;
  if (cnt == kChunk) {
#pragma unroll
    for (int h = 0; h < E::kBytes * kChunk / 16; ++h) {
      Bytes<16> b;
#pragma unroll
      for (int e = 0; e < 16 / E::kBytes; ++e)
        E::to_bits(v[h * (16 / E::kBytes) + e], b.b + e * E::kBytes);
      store_bytes<16>(p + 16 * h, b);
    }
  } else {
    // One element-wide store each: a 16-bit value converted and stored byte by byte straight from
    // its register came out with a wrong low byte on sm_90 (CUDA 13.0 ptxas, seen on an H200).
#pragma unroll
    for (int e = 0; e < kChunk; ++e) {
      if (e >= cnt) break;
      Bytes<E::kBytes> b;
      E::to_bits(v[e], b.b);
      store_bytes<E::kBytes>(p + e * E::kBytes, b);
    }
  }
}

// Decodes cnt codes of a chunk starting at element c8 (a multiple of 8) of a block at `codes`.
template <int BITS, bool ASYM>
__device__ __forceinline__ void decode_chunk(const std::uint8_t* codes, std::size_t c8, int cnt,
                                             float scale, float offset, float (&v)[kChunk]) {
  constexpr int kCodeBytes = kChunk * BITS / 8;
  const std::uint8_t* p = codes + c8 * BITS / 8;
  Bytes<kCodeBytes> b;
  if (cnt == kChunk) {
    b = load_bytes<kCodeBytes>(p);
  } else {
#pragma unroll
    for (int i = 0; i < kCodeBytes; ++i)
      if (i < (cnt * BITS + 7) / 8) b.b[i] = p[i];
  }
#pragma unroll
  for (int e = 0; e < kChunk; ++e) {
    if (e < cnt) {
      int q;
      if constexpr (BITS == 8) {
        q = ASYM ? static_cast<int>(b.b[e]) : static_cast<int>(static_cast<std::int8_t>(b.b[e]));
      } else {
        q = ASYM ? detail::nibble_unsigned(b.b[e / 2], e & 1)
                 : detail::nibble_signed(b.b[e / 2], e & 1);
      }
      v[e] = ASYM ? detail::dequantize_asymmetric(q, scale, offset)
                  : detail::dequantize_symmetric(q, scale);
    }
  }
}

// ---- block-wide reductions ---------------------------------------------------------------------
template <bool kMax>
__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? detail::max_nan_ignoring(v, w) : detail::min_nan_ignoring(v, w);
  }
  return v;
}

// All threads get the block-wide result; `scratch` holds kThreads / 32 floats.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  v = warp_reduce<kMax>(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) {
    v = kMax ? detail::max_nan_ignoring(v, scratch[w]) : detail::min_nan_ignoring(v, scratch[w]);
  }
  return v;
}

// A thread's chunks of a block, kHeld at a time: chunk h of group `base` starts at element
// base + h * kThreads * kChunk. Each group's loads are all issued before any value is used or
// stored (a store through a generic pointer may alias the next load, so the compiler cannot hoist
// loads across it): kHeld loads in flight per thread instead of one. Two cover a default
// 4096-element block; on the H200 four (more registers, fewer resident CTAs) was slower.
inline constexpr int kHeld = 2;
inline constexpr std::size_t kGroupStride = std::size_t(kThreads) * kChunk * kHeld;
// Resident CTAs per SM the kernels are compiled for (__launch_bounds__): 6 caps them at 40
// registers. On the H200 occupancy decided the bandwidth: at 64-80 registers (3-4 CTAs) the
// kernels ran 1.3-1.8x slower; at 32 (8 CTAs) the spills cost more than the occupancy gave.
inline constexpr int kMinBlocks = 6;

__device__ __forceinline__ std::size_t held_chunk(std::size_t base, int h) {
  return base + std::size_t(h) * kThreads * kChunk;
}
__device__ __forceinline__ int chunk_count(std::size_t c8, std::size_t len) {
  return c8 >= len ? 0 : (len - c8 >= kChunk ? kChunk : static_cast<int>(len - c8));
}

// Element-wise over a block of len elements: load(c8, cnt, v) each of a thread's kHeld chunks of a
// group, then store(c8, cnt, v) each.
template <class Load, class Store>
__device__ __forceinline__ void map_block(std::size_t len, Load load, Store store) {
  for (std::size_t base = std::size_t(threadIdx.x) * kChunk; base < len; base += kGroupStride) {
    float v[kHeld][kChunk];
    int cnt[kHeld];
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      cnt[h] = chunk_count(held_chunk(base, h), len);
      if (cnt[h] > 0) load(held_chunk(base, h), cnt[h], v[h]);
    }
#pragma unroll
    for (int h = 0; h < kHeld; ++h)
      if (cnt[h] > 0) store(held_chunk(base, h), cnt[h], v[h]);
  }
}

// Quantizes one block whose values come from produce(c8, cnt, v) (chunk starting at element c8 of
// the block). A block of at most kGroupStride elements stays in registers between the passes; a
// larger one goes through `cache` (len + kChunk floats of shared memory) or, when that is null, is
// produced again in pass 2.
template <int BITS, bool ASYM, class Produce>
__device__ __forceinline__ void quantize_block(Produce produce, std::size_t len, float* cache,
                                               std::uint8_t* codes, float* scale_out,
                                               float* offset_out) {
  __shared__ float scratch[kThreads / 32];
  const bool in_registers = len <= kGroupStride;
  // Cache layout: element e of chunk c at e * stride + c, so a warp's accesses hit consecutive
  // banks (chunk-major order would be an 8-way bank conflict). Needs len + kChunk floats.
  const std::size_t stride = (len + kChunk - 1) / kChunk;
  float amax = 0.0f, lo = detail::kPosInf, hi = -detail::kPosInf;
  float v[kHeld][kChunk];
  int cnt[kHeld];
#pragma unroll
  for (int h = 0; h < kHeld; ++h) cnt[h] = 0;
  for (std::size_t base = std::size_t(threadIdx.x) * kChunk; base < len; base += kGroupStride) {
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      cnt[h] = chunk_count(held_chunk(base, h), len);
      if (cnt[h] > 0) produce(held_chunk(base, h), cnt[h], v[h]);
    }
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
#pragma unroll
      for (int e = 0; e < kChunk; ++e) {
        if (e < cnt[h]) {
          if (!in_registers && cache != nullptr)
            cache[e * stride + held_chunk(base, h) / kChunk] = v[h][e];
          if constexpr (ASYM) {
            lo = detail::min_nan_ignoring(lo, v[h][e]);
            hi = detail::max_nan_ignoring(hi, v[h][e]);
          } else {
            amax = detail::max_nan_ignoring(amax, detail::fabs_bits(v[h][e]));
          }
        }
      }
    }
  }
  detail::BlockQ bq;
  if constexpr (ASYM) {
    lo = block_reduce<false>(lo, scratch);
    hi = block_reduce<true>(hi, scratch);
    if (lo > hi) lo = hi = 0.0f;  // every element NaN
    bq = detail::block_asymmetric(lo, hi, BITS);
  } else {
    amax = block_reduce<true>(amax, scratch);
    bq = detail::block_symmetric(amax, BITS);
  }
  if (threadIdx.x == 0) {
    *scale_out = bq.scale;
    if constexpr (ASYM) *offset_out = bq.offset;
  }
  // Codes of the chunks held in v (group `base`).
  auto emit = [&](std::size_t base) {
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      if (cnt[h] == 0) continue;
      int q[kChunk];
#pragma unroll
      for (int e = 0; e < kChunk; ++e) {
        q[e] = e >= cnt[h] ? 0
               : ASYM      ? detail::quantize_asymmetric(v[h][e], bq, BITS)
                           : detail::quantize_symmetric(v[h][e], bq, BITS);
      }
      constexpr int kCodeBytes = kChunk * BITS / 8;
      Bytes<kCodeBytes> b;
#pragma unroll
      for (int i = 0; i < kCodeBytes; ++i) {
        b.b[i] = BITS == 8 ? static_cast<std::uint8_t>(q[i])
                           : detail::pack_nibbles(q[2 * i], q[2 * i + 1]);
      }
      std::uint8_t* p = codes + held_chunk(base, h) * BITS / 8;
      if (cnt[h] == kChunk) {
        store_bytes<kCodeBytes>(p, b);
      } else {
#pragma unroll
        for (int i = 0; i < kCodeBytes; ++i)
          if (i < (cnt[h] * BITS + 7) / 8) p[i] = b.b[i];
      }
    }
  };
  if (in_registers) {
    emit(std::size_t(threadIdx.x) * kChunk);
    return;
  }
  // block_reduce ended with __syncthreads after every cache write of pass 1.
  for (std::size_t base = std::size_t(threadIdx.x) * kChunk; base < len; base += kGroupStride) {
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      const std::size_t c8 = held_chunk(base, h);
      cnt[h] = chunk_count(c8, len);
      if (cache != nullptr) {
#pragma unroll
        for (int e = 0; e < kChunk; ++e)
          v[h][e] = e < cnt[h] ? cache[e * stride + c8 / kChunk] : 0.0f;
      } else if (cnt[h] > 0) {
        produce(c8, cnt[h], v[h]);
      }
    }
    emit(base);
  }
}

}  // namespace zerosim::kernels::cuda::dev
