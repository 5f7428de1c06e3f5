// Error checking for every CUDA, NCCL and cuBLAS call in the harness: a failure throws HarnessError
// naming the call's file and line and the library's message. Exit codes (main decides): 2 bad
// arguments, 3 no usable GPU / NCCL unavailable, 4 NCCL failure or hang (watchdog), 1 anything
// else.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace zerosim::harness {

constexpr int kExitBadArgs = 2, kExitNoGpu = 3, kExitNccl = 4;

class HarnessError : public std::runtime_error {
 public:
  HarnessError(int exit_code, const std::string& msg)
      : std::runtime_error(msg), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw HarnessError(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? kExitNoGpu : 1,
                       fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                                   cudaGetErrorString(e), cudaGetErrorName(e)));
}
inline void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess)
    throw HarnessError(
        kExitNccl, fmt::format("{}:{}: {} failed: {}", file, line, call, ncclGetErrorString(r)));
}
inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw HarnessError(1, fmt::format("{}:{}: {} failed: cuBLAS status {}", file, line, call,
                                      static_cast<int>(s)));
}

}  // namespace zerosim::harness

#define CUDA_CHECK(call) ::zerosim::harness::check_cuda((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::zerosim::harness::check_nccl((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::zerosim::harness::check_cublas((call), #call, __FILE__, __LINE__)
