// Bad arguments to the quantization reference give std::invalid_argument with a clear message.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/quantize.hpp"

using namespace zerosim::kernels;

namespace {

// Runs f and returns the message of the std::invalid_argument it throws ("" if none).
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

#define CHECK_MESSAGE_HAS(call, text)                   \
  do {                                                  \
    const std::string msg_ = message_of([&] { call; }); \
    INFO("message: " << msg_);                          \
    CHECK(msg_.find(text) != std::string::npos);        \
  } while (0)

}  // namespace

TEST_CASE("quantize and dequantize reject bad arguments") {
  std::vector<float> x(64, 1.0f), y(64);
  std::vector<std::uint8_t> q(64);
  std::vector<float> s(64), o(64);
  QuantParams p;
  p.block_size = 16;
  const QuantizedRef out{q.data(), s.data(), o.data()};
  const QuantizedCRef in{q.data(), s.data(), o.data()};

  CHECK_MESSAGE_HAS(quantize(nullptr, DType::kF32, 64, p, out),
                    "zerosim::kernels::quantize: input buffer is null");
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, p, {nullptr, s.data(), nullptr}),
                    "quantize: output data buffer is null");
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, p, {q.data(), nullptr, nullptr}),
                    "quantize: output scales buffer is null");
  QuantParams asym = p;
  asym.asymmetric = true;
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, asym, {q.data(), s.data(), nullptr}),
                    "output offsets buffer is null (required when asymmetric)");

  QuantParams zero = p;
  zero.block_size = 0;
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, zero, out),
                    "quantize: block_size must be > 0 (got 0)");
  CHECK_MESSAGE_HAS(dequantize(in, 64, zero, y.data(), DType::kF32),
                    "dequantize: block_size must be > 0 (got 0)");
  QuantParams bits = p;
  bits.bits = 3;
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, bits, out), "bits must be 8 or 4 (got 3)");
  QuantParams odd4 = p;
  odd4.bits = 4;
  odd4.block_size = 15;
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, odd4, out),
                    "block_size must be even for INT4");
  QuantParams seg = p;
  seg.segment = 24;
  CHECK_MESSAGE_HAS(quantize(x.data(), DType::kF32, 64, seg, out),
                    "segment (24) must divide the element count (64)");

  CHECK_MESSAGE_HAS(dequantize({nullptr, s.data(), nullptr}, 64, p, y.data(), DType::kF32),
                    "dequantize: input data buffer is null");
  CHECK_MESSAGE_HAS(dequantize(in, 64, p, nullptr, DType::kF32),
                    "dequantize: output buffer is null");

  // n == 0 is a valid no-op even with null buffers.
  CHECK_NOTHROW(quantize(nullptr, DType::kF16, 0, p, {}));
  CHECK_NOTHROW(dequantize({}, 0, p, nullptr, DType::kF16));
}

TEST_CASE("qgZ kernels reject group counts that do not divide and null inputs") {
  std::vector<float> x(96, 1.0f), y(96);
  std::vector<std::uint8_t> q(96);
  std::vector<float> s(96), o(96);
  QuantParams p;
  p.bits = 4;
  p.block_size = 8;
  const QuantizedRef out{q.data(), s.data(), o.data()};

  QgzShape shape{2, 4, 1};
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(x.data(), DType::kF32, 92, shape, p, out),
                    "qgz_swizzle_quantize: element count 92 must be a multiple of nodes (2) x "
                    "gpus_per_node (4) x pipeline_slices (1) = 8");
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(x.data(), DType::kF32, 24, shape, p, out),
                    "must be a multiple of 2 x nodes x gpus_per_node x pipeline_slices = 16 for "
                    "INT4");
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(x.data(), DType::kF32, 96, QgzShape{0, 4, 1}, p, out),
                    "nodes must be >= 1 (got 0)");
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(x.data(), DType::kF32, 96, QgzShape{2, 0, 1}, p, out),
                    "gpus_per_node must be >= 1 (got 0)");
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(x.data(), DType::kF32, 96, QgzShape{2, 4, 0}, p, out),
                    "pipeline_slices must be >= 1 (got 0)");
  CHECK_MESSAGE_HAS(qgz_swizzle_quantize(nullptr, DType::kF32, 96, shape, p, out),
                    "qgz_swizzle_quantize: input buffer is null");

  const QuantizedCRef in{q.data(), s.data(), o.data()};
  const QuantizedCRef ins[2] = {in, {nullptr, s.data(), nullptr}};
  CHECK_MESSAGE_HAS(dequant_reduce_quantize(ins, 0, 96, p, out), "n_inputs must be >= 1 (got 0)");
  CHECK_MESSAGE_HAS(dequant_reduce_quantize(nullptr, 2, 96, p, out), "inputs array is null");
  CHECK_MESSAGE_HAS(dequant_reduce_quantize(ins, 2, 96, p, out),
                    "dequant_reduce_quantize: inputs[1] data buffer is null");
  CHECK_MESSAGE_HAS(dequant_reduce(ins, 2, 96, p, 1.0f, y.data(), DType::kF32),
                    "dequant_reduce: inputs[1] data buffer is null");
  CHECK_MESSAGE_HAS(dequant_reduce(ins, 1, 96, p, 1.0f, nullptr, DType::kF32),
                    "dequant_reduce: output buffer is null");
  QuantParams seg = p;
  seg.segment = 10;
  CHECK_MESSAGE_HAS(dequant_reduce(ins, 1, 96, seg, 1.0f, y.data(), DType::kF32),
                    "segment (10) must divide the element count (96)");
}
