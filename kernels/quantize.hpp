// Block quantization for ZeRO++ (qwZ: INT8 weights, qgZ: INT4 gradients) — CPU reference API.
//
// A tensor of n elements (FP32, FP16 or BF16) is cut into blocks of `block_size` consecutive
// elements; each block gets one FP32 scale (and, when asymmetric, one FP32 offset = block minimum).
// The CUDA kernels (kernels/quantize_cuda.hpp) implement exactly the same arithmetic: for the same
// input they produce the same bytes, scales and offsets, bit for bit.
//
// Semantics (identical on CPU and GPU; every step is one correctly rounded IEEE-754 binary32
// operation, no fused multiply-add, default round-to-nearest-even, no flush-to-zero):
//   symmetric, qmax = 127 (INT8) or 7 (INT4):
//     amax  = max |x| over the block (as FP32; -0 counts as +0; NaN elements are ignored)
//     pre   = 2^64 if amax < 2^-64 else 1            (exact power-of-two pre-scaling, so tiny and
//                                                     denormal blocks keep full resolution)
//     scale = amax / qmax          (stored; dequantized value = q * scale)
//     inv   = qmax / (amax * pre)  (0 < amax; an all-zero block gets scale = 0 and q = 0)
//     q     = rne(clamp((x * pre) * inv, -qmax, qmax))   stored as two's complement
//   asymmetric, levels = 255 (INT8) or 15 (INT4):
//     lo, hi = min, max over the block's non-NaN elements (both 0 if none), then + 0.0 so -0
//     becomes +0; amax = max(|lo|, |hi|)
//     pre   = 2^64 if amax < 2^-64, 2^-64 if amax > 2^64, else 1
//     scale = ((hi * pre - lo * pre) / levels) * (1 / pre)    (stored), offset = lo (stored)
//     inv   = levels / (hi * pre - lo * pre)   (hi == lo gives scale = 0 and q = 0)
//     q     = rne(clamp((x * pre - lo * pre) * inv, 0, levels))   stored unsigned
//     dequantized value = q * scale + offset   (a multiply, then an add: two roundings)
//   rne = round to nearest, ties to even. clamp happens before rounding; a NaN element becomes the
//   lower clamp bound. Inputs should be finite; NaN/Inf never crash but their output is unspecified
//   beyond what the formulas above give.
//
// Round-trip error (FP32 output, finite inputs, tested): |x - dequant(quant(x))| <= scale / 2 +
// 2^-20 * amax + 256 * 2^-149, i.e. half a step plus the FP32 rounding of the few operations above
// plus, for blocks whose scale is an FP32 denormal, its absolute rounding times |q|. FP16/BF16
// output is the FP32 result rounded once more (nearest even).
//
// Packing: INT8 = one signed (or, asymmetric, unsigned) byte per element. INT4 = two elements per
// byte: element 2i in the LOW nibble (bits 0-3), element 2i+1 in the HIGH nibble (bits 4-7); an odd
// last element leaves the high nibble 0. For INT4 the block size (and segment) must be even so that
// every block starts on a byte boundary: block b of a segment starts at byte b * block_size / 2.
//
// Segments: the tensor may be cut into equal segments of `segment` elements (0 = one segment, the
// whole tensor). Blocks restart at every segment boundary (the last block of a segment may be
// partial), so each segment's bytes and scales are contiguous and can be sent to a different rank.
// Layout: data bytes of segment k start at k * quantized_bytes(segment); its scales (and offsets)
// start at k * num_blocks(segment).
//
// All functions throw std::invalid_argument with a message naming the function, the argument and
// the rule for bad arguments (null buffers when n > 0, block size 0, bits other than 4/8, odd INT4
// block size, segment or group counts that do not divide n). n == 0 is a no-op.
#pragma once
#include <cstddef>
#include <cstdint>

namespace zerosim::kernels {

// Element type of an unquantized buffer.
enum class DType { kF32, kF16, kBF16 };
std::size_t dtype_bytes(DType t);
const char* dtype_name(DType t);

// DeepSpeed uses blocks of 4k-8k elements for ZeRO++; 4096 is its qwZ default range's low end.
inline constexpr std::size_t kDefaultBlockSize = 4096;

struct QuantParams {
  int bits = 8;             // 8 or 4
  bool asymmetric = false;  // false: symmetric (scale only); true: scale + offset (block minimum)
  std::size_t block_size = kDefaultBlockSize;  // elements per block; even for INT4
  std::size_t segment = 0;  // elements per segment (0 = whole tensor); must divide n
};

// Mutable view of a quantized tensor (host pointers for the CPU API, device pointers for CUDA).
struct QuantizedRef {
  std::uint8_t* data = nullptr;  // quantized_bytes(n, p) bytes
  float* scales = nullptr;       // num_blocks(n, p) floats
  float* offsets = nullptr;  // num_blocks(n, p) floats when asymmetric, else unused (may be null)
};
struct QuantizedCRef {
  const std::uint8_t* data = nullptr;
  const float* scales = nullptr;
  const float* offsets = nullptr;
};

// Sizes of a quantized tensor of n elements (validate p first; these do not throw on n == 0).
std::size_t segment_elements(std::size_t n, const QuantParams& p);  // p.segment or n
std::size_t quantized_bytes(std::size_t n, const QuantParams& p);   // data bytes
std::size_t num_blocks(std::size_t n, const QuantParams& p);        // scales (and offsets) count

// Throws std::invalid_argument("<fn>: <arg> <rule>") when p cannot describe a tensor of n elements.
void validate(const char* fn, std::size_t n, const QuantParams& p);

// Quantize n elements of type t at `in` into `out`.
void quantize(const void* in, DType t, std::size_t n, const QuantParams& p, QuantizedRef out);

// Dequantize n elements into `out` of type t (FP32 result rounded to nearest even for FP16/BF16).
void dequantize(QuantizedCRef in, std::size_t n, const QuantParams& p, void* out, DType t);

// ---- qgZ: quantized gradient reduce-scatter by a two-hop hierarchical all-to-all ----------------
//
// W = nodes * gpus_per_node ranks, rank r = node * gpus_per_node + local. The reduce-scatter result
// gives rank r partition r (elements [r * n / W, (r + 1) * n / W)). With S pipeline slices every
// partition is cut into S sub-slices ("units") of U = n / (W * S) elements; stage s moves sub-slice
// s.
//
// Step 1 (qgz_swizzle_quantize): reorder units into order (s, j, y) = sub-slice s of partition
// y * gpus_per_node + j, and quantize each unit as one segment (p.segment is set to U). For stage
// s, the Y units (s, j, 0..Y-1) are contiguous and go to local GPU j in the intra-node all-to-all.
// Step 2 (dequant_reduce_quantize on each rank, per stage): the N received pieces of Y units each
// are dequantized, summed in FP32 (in input order) and re-quantized, segment U; unit y then goes to
// node y in the inter-node all-to-all among GPUs with the same local index.
// Step 3 (dequant_reduce, per stage): the Y received units are dequantized and summed into
// sub-slice s of the rank's own partition. post_scale = 1 gives the sum, 1/W the mean (DeepSpeed
// averages gradients); the sum is multiplied by post_scale once, in FP32.
struct QgzShape {
  std::size_t nodes = 1;            // Y
  std::size_t gpus_per_node = 1;    // N
  std::size_t pipeline_slices = 1;  // S
};
// Throws unless all counts are >= 1 and n is a multiple of W * S (and of 2 * W * S for INT4).
void validate_qgz(const char* fn, std::size_t n, const QgzShape& s, const QuantParams& p);
std::size_t qgz_unit_elements(std::size_t n, const QgzShape& s);  // U = n / (W * S)
// Source element offset of output unit k = (s * N + j) * Y + y.
std::size_t qgz_unit_source(std::size_t k, std::size_t n, const QgzShape& s);

// Reorder + quantize a full gradient of n elements; out holds W * S units of U elements (p.segment
// is ignored and taken as U).
void qgz_swizzle_quantize(const void* grad, DType t, std::size_t n, const QgzShape& s,
                          const QuantParams& p, QuantizedRef out);

// out = quantize(sum_i dequantize(inputs[i])) for n_inputs tensors of n elements each with the same
// params p (including p.segment). The FP32 sum is taken in input order 0..n_inputs-1.
void dequant_reduce_quantize(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                             const QuantParams& p, QuantizedRef out);

// out = (sum_i dequantize(inputs[i])) * post_scale, converted to t.
void dequant_reduce(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                    const QuantParams& p, float post_scale, void* out, DType t);

}  // namespace zerosim::kernels
