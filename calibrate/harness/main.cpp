// zerosim-calibrate: measures on the local GPUs what a CostProfile needs (NCCL collectives, cuBLAS
// GEMMs, D2D copy, the quantization kernels) and appends each result to a measurement file as soon
// as it is measured. `zerosim calibrate fit` turns that file into a profile. Exit codes: 0 done; 2
// bad arguments; 3 no usable CUDA GPU; 4 NCCL failure or hang; 1 anything else.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "calibrate/harness/check.hpp"
#include "calibrate/harness/harness.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#ifdef ZEROSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace {

using namespace zerosim::harness;

int run(Options opt) {
  Context ctx;
  ctx.opt = std::move(opt);
#ifdef ZEROSIM_HAVE_MPI
  if (ctx.opt.mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.world_size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx.world_rank, MPI_INFO_NULL,
                        &local);
    MPI_Comm_rank(local, &ctx.local_rank);
    MPI_Comm_size(local, &ctx.local_size);
    MPI_Comm_free(&local);
    int lo = 0, hi = 0;
    MPI_Allreduce(&ctx.local_size, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&ctx.local_size, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi)
      throw HarnessError(kExitBadArgs, "--mpi: every node must run the same number of ranks");
    ctx.nodes = ctx.world_size / ctx.local_size;
  }
#endif
  int ngpus = 0;
  cudaError_t e = cudaGetDeviceCount(&ngpus);
  if (e != cudaSuccess || ngpus == 0)
    throw HarnessError(
        kExitNoGpu,
        fmt::format("no usable CUDA GPU: {} (cudaGetDeviceCount: {}); zerosim-calibrate "
                    "must run on a machine with NVIDIA GPUs and a working driver",
                    e == cudaSuccess ? "0 devices" : cudaGetErrorString(e),
                    e == cudaSuccess ? "ok" : cudaGetErrorName(e)));
  if (ctx.opt.mpi && ctx.local_rank >= ngpus)
    throw HarnessError(kExitBadArgs, fmt::format("--mpi: {} ranks on a node but only {} GPUs",
                                                 ctx.local_size, ngpus));
  CUDA_CHECK(cudaSetDevice(ctx.opt.mpi ? ctx.local_rank : 0));
  Watchdog wd;
  ctx.watchdog = &wd;
  nlohmann::json prov = collect_provenance(ctx);
  if (ctx.world_rank == 0) {
    ctx.writer = std::make_unique<zerosim::calib::MeasurementWriter>(ctx.opt.out, prov);
    std::printf(
        "zerosim-calibrate: %d GPU(s) here (%s), %d process(es) on %d node(s); writing %s\n", ngpus,
        prov["gpus"][0]["name"].get<std::string>().c_str(), ctx.world_size, ctx.nodes,
        ctx.opt.out.c_str());
  }
  auto wants = [&](const char* w) {
    return std::find(ctx.opt.what.begin(), ctx.opt.what.end(), w) != ctx.opt.what.end();
  };
  if (wants("collectives")) {
    if (ctx.opt.mpi)
      run_collectives_mpi(ctx);
    else
      run_collectives_single(ctx, ngpus);
  }
  // Single-GPU measurements run on rank 0's GPU only (every GPU of a node is the same model).
  if (ctx.world_rank == 0) {
    if (wants("copy")) run_copy(ctx);
    if (wants("kernels")) run_kernels(ctx);
    if (wants("gemm")) run_gemm(ctx);
  }
  if (ctx.world_rank == 0)
    std::printf("zerosim-calibrate: done; measurements in %s\n", ctx.opt.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string min_b = "8", max_b = "1GiB";
  opt.what = {"collectives", "copy", "kernels", "gemm"};
  opt.ops = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "send_recv"};
  opt.hidden = {4096, 6144, 8192, 12288};
  opt.tokens = {1024, 2048, 4096};
  CLI::App app{
      "zerosim-calibrate: measure NCCL collectives, cuBLAS GEMMs, D2D copy and the quantization "
      "kernels "
      "on local GPUs (one process over all GPUs, or one process per GPU under mpirun with --mpi)"};
  app.add_option("--out", opt.out, "measurement file (JSON lines; appended, fsynced per record)")
      ->required();
  app.add_option("--what", opt.what, "any of: collectives copy kernels gemm")
      ->check(CLI::IsMember({"collectives", "copy", "kernels", "gemm"}))
      ->delimiter(',');
  app.add_option("--ops", opt.ops, "collectives to time")
      ->check(
          CLI::IsMember({"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "send_recv"}))
      ->delimiter(',');
  app.add_option("--ranks", opt.ranks,
                 "rank counts for single-process runs (default 2, 4, ..., all GPUs)")
      ->delimiter(',');
  app.add_option("-b,--min-bytes", min_b, "smallest size (nccl-tests -b; K/M/G binary)");
  app.add_option("-e,--max-bytes", max_b, "largest size (nccl-tests -e)");
  app.add_option("-f,--step-factor", opt.step_factor, "size multiplier (nccl-tests -f)")
      ->check(CLI::Range(1.01, 1024.0));
  app.add_option("-w,--warmup", opt.warmup, "warm-up iterations")->check(CLI::Range(0, 1000));
  app.add_option("-n,--iters", opt.iters, "timed iterations")->check(CLI::Range(1, 100000));
  app.add_option("--timeout", opt.timeout_s,
                 "watchdog: seconds before one measurement counts as hung")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--hidden", opt.hidden, "GEMM layer shapes: hidden sizes")->delimiter(',');
  app.add_option("--tokens", opt.tokens, "GEMM layer shapes: tokens per GPU")->delimiter(',');
  app.add_flag("--mpi", opt.mpi, "one process per GPU under mpirun (multi-node)");
  try {
    app.parse(argc, argv);
    opt.min_bytes = zerosim::parse_bytes(min_b, "--min-bytes");
    opt.max_bytes = zerosim::parse_bytes(max_b, "--max-bytes");
    if (opt.min_bytes > opt.max_bytes)
      throw zerosim::flag_error("--min-bytes", "must not exceed --max-bytes");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadArgs;
  } catch (const zerosim::InputError& e) {
    std::fprintf(stderr, "zerosim-calibrate: error: %s\n", e.what());
    return kExitBadArgs;
  }
  for (int i = 0; i < argc; ++i) opt.command += (i ? " " : "") + std::string(argv[i]);
#ifdef ZEROSIM_HAVE_MPI
  if (opt.mpi) MPI_Init(&argc, &argv);
#else
  if (opt.mpi) {
    std::fprintf(stderr, "zerosim-calibrate: error: --mpi: this build has no MPI support\n");
    return kExitBadArgs;
  }
#endif
  int code = 0;
  try {
    code = run(opt);
  } catch (const HarnessError& e) {
    std::fprintf(stderr, "zerosim-calibrate: error: %s\n", e.what());
    code = e.exit_code();
  } catch (const zerosim::InputError& e) {
    std::fprintf(stderr, "zerosim-calibrate: error: %s\n", e.what());
    code = kExitBadArgs;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerosim-calibrate: error: %s\n", e.what());
    code = 1;
  }
#ifdef ZEROSIM_HAVE_MPI
  if (opt.mpi) {
    if (code != 0) MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Finalize();
  }
#endif
  return code;
}
