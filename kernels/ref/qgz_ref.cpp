// CPU reference of qgZ's fused kernels: swizzle + quantize, dequantize-reduce-requantize, and the
// final dequantize-reduce. Layout rules are in kernels/quantize.hpp.
#include <string>
#include <vector>

#include "kernels/quantize.hpp"
#include "kernels/ref/block_ref.hpp"

namespace zerosim::kernels {

void validate_qgz(const char* fn, std::size_t n, const QgzShape& s, const QuantParams& p) {
  using ref::bad_arg;
  if (s.nodes == 0) bad_arg(fn, "nodes must be >= 1 (got 0)");
  if (s.gpus_per_node == 0) bad_arg(fn, "gpus_per_node must be >= 1 (got 0)");
  if (s.pipeline_slices == 0) bad_arg(fn, "pipeline_slices must be >= 1 (got 0)");
  const std::size_t groups = s.nodes * s.gpus_per_node * s.pipeline_slices;
  if (n % groups != 0) {
    bad_arg(fn, "element count " + std::to_string(n) + " must be a multiple of nodes (" +
                    std::to_string(s.nodes) + ") x gpus_per_node (" +
                    std::to_string(s.gpus_per_node) + ") x pipeline_slices (" +
                    std::to_string(s.pipeline_slices) + ") = " + std::to_string(groups));
  }
  if (p.bits == 4 && (n / groups) % 2 != 0) {
    bad_arg(fn, "element count " + std::to_string(n) + " must be a multiple of 2 x nodes x " +
                    "gpus_per_node x pipeline_slices = " + std::to_string(2 * groups) +
                    " for INT4 (each unit must fill whole bytes)");
  }
  QuantParams unit = p;
  unit.segment = n / groups;
  validate(fn, n, unit);
}

std::size_t qgz_unit_elements(std::size_t n, const QgzShape& s) {
  return n / (s.nodes * s.gpus_per_node * s.pipeline_slices);
}

std::size_t qgz_unit_source(std::size_t k, std::size_t n, const QgzShape& s) {
  return detail::qgz_source(k, n, s.nodes, s.gpus_per_node, qgz_unit_elements(n, s));
}

void qgz_swizzle_quantize(const void* grad, DType t, std::size_t n, const QgzShape& s,
                          const QuantParams& p, QuantizedRef out) {
  static constexpr const char* kFn = "zerosim::kernels::qgz_swizzle_quantize";
  validate_qgz(kFn, n, s, p);
  QuantParams up = p;
  up.segment = qgz_unit_elements(n, s);
  ref::check_quantize_args(kFn, grad, n, up, out);
  if (n == 0) return;
  ref::dispatch_dtype(t, [&]<DType D>() {
    using E = ref::Elem<D>;
    const auto* x = static_cast<const typename E::T*>(grad);
    ref::for_each_block(
        n, up, [&](std::size_t first, std::size_t len, std::size_t byte, std::size_t block) {
          const std::size_t src = qgz_unit_source(first / up.segment, n, s) + first % up.segment;
          const auto* base = x + src;
          ref::quantize_block([base](std::size_t i) { return E::load(base, i); }, len, up,
                              out.data + byte, out.scales + block,
                              up.asymmetric ? out.offsets + block : nullptr);
        });
  });
}

namespace {

// FP32 sum of element i of block (byte, block) over all inputs, in input order.
float reduced_at(const QuantizedCRef* inputs, std::size_t n_inputs, const QuantParams& p,
                 std::size_t byte, std::size_t block, std::size_t i) {
  float sum = 0.0f;
  for (std::size_t k = 0; k < n_inputs; ++k) {
    const float offset = p.asymmetric ? inputs[k].offsets[block] : 0.0f;
    sum += ref::dequantize_at(inputs[k].data + byte, i, inputs[k].scales[block], offset, p);
  }
  return sum;
}

}  // namespace

void dequant_reduce_quantize(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                             const QuantParams& p, QuantizedRef out) {
  static constexpr const char* kFn = "zerosim::kernels::dequant_reduce_quantize";
  ref::check_inputs(kFn, inputs, n_inputs, n, p);
  ref::check_quantize_args(kFn, n == 0 ? nullptr : inputs, n, p, out);
  std::vector<float> sums;
  ref::for_each_block(n, p, [&](std::size_t, std::size_t len, std::size_t byte, std::size_t block) {
    sums.resize(len);
    for (std::size_t i = 0; i < len; ++i) sums[i] = reduced_at(inputs, n_inputs, p, byte, block, i);
    ref::quantize_block([&sums](std::size_t i) { return sums[i]; }, len, p, out.data + byte,
                        out.scales + block, p.asymmetric ? out.offsets + block : nullptr);
  });
}

void dequant_reduce(const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                    const QuantParams& p, float post_scale, void* out, DType t) {
  static constexpr const char* kFn = "zerosim::kernels::dequant_reduce";
  ref::check_inputs(kFn, inputs, n_inputs, n, p);
  if (n != 0 && out == nullptr) ref::bad_arg(kFn, "output buffer is null");
  ref::dispatch_dtype(t, [&]<DType D>() {
    using E = ref::Elem<D>;
    auto* y = static_cast<typename E::T*>(out);
    ref::for_each_block(
        n, p, [&](std::size_t first, std::size_t len, std::size_t byte, std::size_t block) {
          for (std::size_t i = 0; i < len; ++i) {
            E::store(y, first + i, reduced_at(inputs, n_inputs, p, byte, block, i) * post_scale);
          }
        });
  });
}

}  // namespace zerosim::kernels
