// Argument checks shared by the CPU reference and the CUDA host API, so both reject the same
// arguments with the same std::invalid_argument messages ("<function>: <argument> <rule>").
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/quantize.hpp"

namespace zerosim::kernels::ref {

[[noreturn]] inline void bad_arg(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + what);
}

// Null-buffer checks (no-ops when n == 0); defined in quantize_ref.cpp.
void check_in(const char* fn, std::size_t n, const QuantParams& p, const QuantizedCRef& in,
              const std::string& what);
void check_quantize_args(const char* fn, const void* in, std::size_t n, const QuantParams& p,
                         const QuantizedRef& out);
// validate(p) + n_inputs >= 1 + inputs non-null + every input's buffers non-null.
void check_inputs(const char* fn, const QuantizedCRef* inputs, std::size_t n_inputs, std::size_t n,
                  const QuantParams& p);

}  // namespace zerosim::kernels::ref
