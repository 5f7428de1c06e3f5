// CPU reference: argument validation, layout sizes, block quantize and dequantize.
#include <string>

#include "kernels/quantize.hpp"
#include "kernels/ref/block_ref.hpp"

namespace zerosim::kernels {

std::size_t dtype_bytes(DType t) { return t == DType::kF32 ? 4 : 2; }

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
    default:
      return "fp32";
  }
}

std::size_t segment_elements(std::size_t n, const QuantParams& p) {
  return p.segment == 0 ? n : p.segment;
}

std::size_t quantized_bytes(std::size_t n, const QuantParams& p) {
  return p.bits == 4 ? (n + 1) / 2 : n;
}

std::size_t num_blocks(std::size_t n, const QuantParams& p) {
  if (p.block_size == 0 || n == 0) return 0;
  const std::size_t seg = segment_elements(n, p);
  return (n / seg) * ((seg + p.block_size - 1) / p.block_size);
}

void validate(const char* fn, std::size_t n, const QuantParams& p) {
  using ref::bad_arg;
  if (p.bits != 8 && p.bits != 4) {
    bad_arg(fn, "bits must be 8 or 4 (got " + std::to_string(p.bits) + ")");
  }
  if (p.block_size == 0) bad_arg(fn, "block_size must be > 0 (got 0)");
  if (p.bits == 4 && p.block_size % 2 != 0) {
    bad_arg(fn, "block_size must be even for INT4 so every block starts on a byte boundary (got " +
                    std::to_string(p.block_size) + ")");
  }
  if (p.segment != 0) {
    if (n % p.segment != 0) {
      bad_arg(fn, "segment (" + std::to_string(p.segment) + ") must divide the element count (" +
                      std::to_string(n) + ")");
    }
    if (p.bits == 4 && p.segment % 2 != 0) {
      bad_arg(fn, "segment must be even for INT4 (got " + std::to_string(p.segment) + ")");
    }
  }
}

namespace {

void check_out(const char* fn, std::size_t n, const QuantParams& p, const QuantizedRef& out) {
  if (n == 0) return;
  if (out.data == nullptr) ref::bad_arg(fn, "output data buffer is null");
  if (out.scales == nullptr) ref::bad_arg(fn, "output scales buffer is null");
  if (p.asymmetric && out.offsets == nullptr) {
    ref::bad_arg(fn, "output offsets buffer is null (required when asymmetric)");
  }
}

}  // namespace

namespace ref {
void check_in(const char* fn, std::size_t n, const QuantParams& p, const QuantizedCRef& in,
              const std::string& what) {
  if (n == 0) return;
  if (in.data == nullptr) bad_arg(fn, what + " data buffer is null");
  if (in.scales == nullptr) bad_arg(fn, what + " scales buffer is null");
  if (p.asymmetric && in.offsets == nullptr) {
    bad_arg(fn, what + " offsets buffer is null (required when asymmetric)");
  }
}
void check_quantize_args(const char* fn, const void* in, std::size_t n, const QuantParams& p,
                         const QuantizedRef& out) {
  validate(fn, n, p);
  if (n != 0 && in == nullptr) bad_arg(fn, "input buffer is null");
  check_out(fn, n, p, out);
}
void check_inputs(const char* fn, const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                  const QuantParams& p) {
  validate(fn, n, p);
  if (n_inputs == 0) bad_arg(fn, "n_inputs must be >= 1 (got 0)");
  if (inputs == nullptr) bad_arg(fn, "inputs array is null");
  for (std::size_t i = 0; i < n_inputs; ++i) {
    check_in(fn, n, p, inputs[i], "inputs[" + std::to_string(i) + "]");
  }
}
}  // namespace ref

void quantize(const void* in, DType t, std::size_t n, const QuantParams& p, QuantizedRef out) {
  static constexpr const char* kFn = "zerosim::kernels::quantize";
  ref::check_quantize_args(kFn, in, n, p, out);
  ref::dispatch_dtype(t, [&]<DType D>() {
    using E = ref::Elem<D>;
    const auto* x = static_cast<const typename E::T*>(in);
    ref::for_each_block(
        n, p, [&](std::size_t first, std::size_t len, std::size_t byte, std::size_t block) {
          const auto* base = x + first;
          ref::quantize_block([base](std::size_t i) { return E::load(base, i); }, len, p,
                              out.data + byte, out.scales + block,
                              p.asymmetric ? out.offsets + block : nullptr);
        });
  });
}

void dequantize(QuantizedCRef in, std::size_t n, const QuantParams& p, void* out, DType t) {
  static constexpr const char* kFn = "zerosim::kernels::dequantize";
  validate(kFn, n, p);
  ref::check_in(kFn, n, p, in, "input");
  if (n != 0 && out == nullptr) ref::bad_arg(kFn, "output buffer is null");
  ref::dispatch_dtype(t, [&]<DType D>() {
    using E = ref::Elem<D>;
    auto* y = static_cast<typename E::T*>(out);
    ref::for_each_block(
        n, p, [&](std::size_t first, std::size_t len, std::size_t byte, std::size_t block) {
          const float scale = in.scales[block];
          const float offset = p.asymmetric ? in.offsets[block] : 0.0f;
          for (std::size_t i = 0; i < len; ++i) {
            E::store(y, first + i, ref::dequantize_at(in.data + byte, i, scale, offset, p));
          }
        });
  });
}

}  // namespace zerosim::kernels
