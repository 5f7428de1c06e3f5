// zerosim-calibrate's pieces: options, the shared run context (measurement writer, watchdog, MPI),
// and the three measurement families: NCCL collectives, cuBLAS GEMMs + D2D copy, quantization
// kernels. Every record is appended and fsynced as soon as it is measured
// (calib::MeasurementWriter).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit/measurements.hpp"
#include "calibrate/harness/watchdog.hpp"

namespace zerosim::harness {

struct Options {
  std::string out;                // measurement file (JSON lines, appended)
  std::vector<std::string> what;  // collectives, gemm, copy, kernels
  std::vector<std::string> ops;   // all_gather, reduce_scatter, all_reduce, all_to_all, send_recv
  std::vector<int> ranks;         // rank counts for single-process runs (empty: 2, 4, ..., all)
  std::uint64_t min_bytes = 8, max_bytes = 1ull << 30;
  double step_factor = 2;
  int warmup = 5, iters = 20;
  double timeout_s = 120;   // watchdog: one measurement longer than this is a hang
  std::vector<int> hidden;  // GEMM layer shapes: hidden sizes
  std::vector<int> tokens;  // GEMM layer shapes: tokens per GPU (M)
  bool mpi = false;         // one process per GPU under mpirun
  std::string command;      // exact command line, for provenance
};

struct Context {
  Options opt;
  std::unique_ptr<calib::MeasurementWriter> writer;  // null on MPI ranks other than 0
  Watchdog* watchdog = nullptr;
  int world_rank = 0, world_size = 1, local_rank = 0, local_size = 1, nodes = 1;
  void record(const nlohmann::json& r) const {
    if (writer) writer->append(r);
  }
};

// Sizes from min to max multiplying by step_factor (nccl-tests' -b/-e/-f), each rounded down to a
// multiple of `align` and at least `align`.
std::vector<std::uint64_t> sweep_sizes(const Options& o, std::uint64_t align);

nlohmann::json collect_provenance(
    const Context& ctx);  // GPUs, driver/CUDA/NCCL/cuBLAS versions, hosts, date
void run_collectives_single(Context& ctx, int ngpus);
void run_collectives_mpi(Context& ctx);
void run_gemm(Context& ctx);
void run_copy(Context& ctx);
void run_kernels(Context& ctx);

}  // namespace zerosim::harness
