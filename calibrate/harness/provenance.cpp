// Provenance of a calibration run, and the sweep of sizes shared by every measurement family.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

#include "calibrate/harness/check.hpp"
#include "calibrate/harness/harness.hpp"
#ifdef ZEROSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace zerosim::harness {

namespace {

std::string version3(int v) { return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 10, v % 10); }

// The CostProfile gpu_model for a CUDA device name, so `zerosim calibrate fit` finds the base
// profile.
std::string gpu_model_for(const std::string& name, std::size_t mem) {
  double gib = static_cast<double>(mem) / (1ull << 30);
  if (name.find("H200") != std::string::npos) return "H200-SXM-141GB";
  if (name.find("H100") != std::string::npos) return "H100-SXM5-80GB";
  if (name.find("A100") != std::string::npos && gib > 60) return "A100-SXM4-80GB";
  if (name.find("V100") != std::string::npos && gib > 24) return "V100-SXM3-32GB";
  return "";
}

}  // namespace

std::vector<std::uint64_t> sweep_sizes(const Options& o, std::uint64_t align) {
  std::vector<std::uint64_t> out;
  for (double s = static_cast<double>(o.min_bytes);
       s <= static_cast<double>(o.max_bytes) * (1 + 1e-12); s *= o.step_factor) {
    std::uint64_t b = std::max<std::uint64_t>(align, static_cast<std::uint64_t>(s) / align * align);
    if (out.empty() || b != out.back()) out.push_back(b);
    if (o.step_factor <= 1) break;
  }
  return out;
}

nlohmann::json collect_provenance(const Context& ctx) {
  nlohmann::json p;
  int ndev = 0, driver = 0, runtime = 0, nccl = 0;
  CUDA_CHECK(cudaGetDeviceCount(&ndev));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  NCCL_CHECK(ncclGetVersion(&nccl));
  nlohmann::json gpus = nlohmann::json::array();
  std::string model;
  for (int d = 0; d < ndev; ++d) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    gpus.push_back({{"index", d},
                    {"name", prop.name},
                    {"memory_bytes", prop.totalGlobalMem},
                    {"sm_count", prop.multiProcessorCount},
                    {"l2_bytes", prop.l2CacheSize},
                    {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
                    {"pci_bus_id", prop.pciBusID}});
    if (d == 0) model = gpu_model_for(prop.name, prop.totalGlobalMem);
  }
  cublasHandle_t h = nullptr;
  int cublas = 0;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasGetVersion(h, &cublas));
  CUBLAS_CHECK(cublasDestroy(h));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<std::string> hosts;
  hosts.push_back(host);
#ifdef ZEROSIM_HAVE_MPI
  if (ctx.opt.mpi) {
    std::vector<char> all(256 * static_cast<std::size_t>(ctx.world_size));
    MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
    std::set<std::string> uniq;
    for (int r = 0; r < ctx.world_size; ++r) uniq.insert(std::string(all.data() + 256 * r));
    hosts.clear();
    for (const auto& h : uniq) hosts.push_back(h);
  }
#endif
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  p["tool"] = "zerosim-calibrate";
  p["gpus"] = gpus;
  p["gpu_count"] = ndev;
  if (!model.empty()) p["gpu_model"] = model;
  p["driver_version"] = version3(driver);
  p["cuda_runtime_version"] = version3(runtime);
  p["nccl_version"] = fmt::format("{}.{}.{}", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
  p["cublas_version"] = cublas;
  p["hosts"] = hosts;
  p["host_count"] = hosts.size();
  p["mpi_ranks"] = ctx.world_size;
  p["date"] = date;
  p["command"] = ctx.opt.command;
  p["method"] = fmt::format(
      "nccl-tests style: {} warm-up iterations, then {} timed iterations; time = wall clock of "
      "the timed burst / iterations after all streams completed; algbw = bytes / time; busbw = "
      "algbw x nccl-tests' bus factor. GEMMs, copies and kernels: the burst is enqueued behind a "
      "host-held gate (GPU time per launch, not the host's launch rate); copies and kernels run "
      "cold (the burst cycles through disjoint copies of the working set, twice the L2 capacity "
      "apart), GEMMs hot",
      ctx.opt.warmup, ctx.opt.iters);
  return p;
}

}  // namespace zerosim::harness
