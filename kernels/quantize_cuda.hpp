// CUDA host API of the quantization kernels: the same functions and bit-level semantics as
// kernels/quantize.hpp (read it for formulas, packing and layout), operating on DEVICE pointers and
// enqueued on a stream. Link target: zerosim_kernels_cuda (built only when CUDA is present; defines
// ZEROSIM_HAVE_CUDA_KERNELS=1 for its users).
//
// Arguments are validated on the host exactly as the CPU reference does (std::invalid_argument).
// Launch failures throw std::runtime_error naming the file, line and CUDA error. Calls are
// asynchronous: synchronize the stream before reading results on the host.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/quantize.hpp"

namespace zerosim::kernels::cuda {

// Most inputs one reduce kernel accepts (the pointers travel as kernel parameters).
inline constexpr std::size_t kMaxReduceInputs = 128;

void quantize(const void* in, DType t, std::size_t n, const QuantParams& p, QuantizedRef out,
              cudaStream_t stream);

void dequantize(QuantizedCRef in, std::size_t n, const QuantParams& p, void* out, DType t,
                cudaStream_t stream);

void qgz_swizzle_quantize(const void* grad, DType t, std::size_t n, const QgzShape& s,
                          const QuantParams& p, QuantizedRef out, cudaStream_t stream);

// `inputs` is a HOST array of n_inputs views holding device pointers (at most kMaxReduceInputs).
void dequant_reduce_quantize(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                             const QuantParams& p, QuantizedRef out, cudaStream_t stream);

void dequant_reduce(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                    const QuantParams& p, float post_scale, void* out, DType t,
                    cudaStream_t stream);

}  // namespace zerosim::kernels::cuda
