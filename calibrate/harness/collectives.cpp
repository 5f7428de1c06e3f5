// NCCL collectives, nccl-tests' method: per (op, size), warm-up iterations, then a timed burst; the
// time is the host wall clock of the burst (after every stream completed) / iterations; algbw =
// bytes/time, busbw = algbw x nccl-tests' bus factor. Byte conventions are nccl-tests' (see
// measurements.hpp); data are floats (reductions are sums). Single process: one communicator per
// rank count over the first r local GPUs (ncclCommInitAll). MPI: one process per GPU, the unique id
// broadcast with MPI_Bcast; groups: the world, the GPUs of each node, and one GPU per node (same
// local index: the network alone).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <numeric>

#include "calibrate/harness/check.hpp"
#include "calibrate/harness/harness.hpp"
#include "sim/collectives/collective.hpp"
#ifdef ZEROSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace zerosim::harness {

namespace {

// One participant of a communicator in this process.
struct Member {
  int device = 0, rank = 0, nranks = 1;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

void launch(const std::string& op, std::uint64_t bytes, const Member& m) {
  const std::size_t n = m.nranks;
  const std::size_t floats = bytes / sizeof(float);
  if (op == "all_gather") {
    NCCL_CHECK(ncclAllGather(m.send, m.recv, floats / n, ncclFloat, m.comm, m.stream));
  } else if (op == "reduce_scatter") {
    NCCL_CHECK(ncclReduceScatter(m.send, m.recv, floats / n, ncclFloat, ncclSum, m.comm, m.stream));
  } else if (op == "all_reduce") {
    NCCL_CHECK(ncclAllReduce(m.send, m.recv, floats, ncclFloat, ncclSum, m.comm, m.stream));
  } else if (op == "all_to_all") {
    const std::size_t chunk = floats / n;
    for (std::size_t p = 0; p < n; ++p) {
      NCCL_CHECK(
          ncclSend(m.send + p * chunk, chunk, ncclFloat, static_cast<int>(p), m.comm, m.stream));
      NCCL_CHECK(
          ncclRecv(m.recv + p * chunk, chunk, ncclFloat, static_cast<int>(p), m.comm, m.stream));
    }
  } else if (op == "send_recv") {
    int next = (m.rank + 1) % m.nranks, prev = (m.rank + m.nranks - 1) % m.nranks;
    NCCL_CHECK(ncclSend(m.send, floats, ncclFloat, next, m.comm, m.stream));
    NCCL_CHECK(ncclRecv(m.recv, floats, ncclFloat, prev, m.comm, m.stream));
  } else {
    throw HarnessError(kExitBadArgs, "--ops: unknown collective '" + op + "'");
  }
}

// One iteration on every local member (grouped, as one process drives several GPUs or sends and
// receives).
void iteration(const std::string& op, std::uint64_t bytes, const std::vector<Member>& ms) {
  NCCL_CHECK(ncclGroupStart());
  for (const auto& m : ms) launch(op, bytes, m);
  NCCL_CHECK(ncclGroupEnd());
}

// Polls streams (as nccl-tests does) so a NCCL async error or the watchdog ends the wait.
void wait_all(const std::vector<Member>& ms, const Watchdog& wd, const std::string& what) {
  for (;;) {
    bool done = true;
    for (const auto& m : ms) {
      cudaError_t e = cudaStreamQuery(m.stream);
      if (e == cudaErrorNotReady) {
        done = false;
      } else {
        CUDA_CHECK(e);
      }
      ncclResult_t async = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(m.comm, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        throw HarnessError(kExitNccl, fmt::format("{}: NCCL asynchronous error: {}", what,
                                                  ncclGetErrorString(async)));
    }
    if (done) return;
    if (wd.fired())
      throw HarnessError(kExitNccl, what + ": hung; communicators aborted by the watchdog");
  }
}

double time_one(Context& ctx, const std::string& op, std::uint64_t bytes,
                const std::vector<Member>& ms, const std::string& what) {
  std::vector<ncclComm_t> comms;
  for (const auto& m : ms) comms.push_back(m.comm);
  ctx.watchdog->arm(ctx.opt.timeout_s, comms, what);
  for (int i = 0; i < ctx.opt.warmup; ++i) iteration(op, bytes, ms);
  wait_all(ms, *ctx.watchdog, what);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ctx.opt.iters; ++i) iteration(op, bytes, ms);
  wait_all(ms, *ctx.watchdog, what);
  auto t1 = std::chrono::steady_clock::now();
  ctx.watchdog->disarm();
  return std::chrono::duration<double>(t1 - t0).count() / ctx.opt.iters;
}

void alloc(Member& m, std::uint64_t max_bytes) {
  CUDA_CHECK(cudaSetDevice(m.device));
  CUDA_CHECK(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMalloc(&m.send, max_bytes));
  CUDA_CHECK(cudaMalloc(&m.recv, max_bytes));
  // Seeded data (nccl-tests checks results; we time only, but keep NaN-free inputs for the sums).
  CUDA_CHECK(cudaMemset(m.send, 0, max_bytes));
  CUDA_CHECK(cudaMemset(m.recv, 0, max_bytes));
}

void release(Member& m) {
  CUDA_CHECK(cudaSetDevice(m.device));
  CUDA_CHECK(cudaFree(m.send));
  CUDA_CHECK(cudaFree(m.recv));
  CUDA_CHECK(cudaStreamDestroy(m.stream));
  NCCL_CHECK(ncclCommDestroy(m.comm));
}

calib::CollectiveRecord make_record(const std::string& op, int ranks, int nodes,
                                    std::uint64_t bytes, double t) {
  calib::CollectiveRecord r;
  r.op = op;
  r.ranks = ranks;
  r.nodes = nodes;
  r.tier = calib::tier_for_nodes(nodes);
  r.bytes = bytes;
  r.time_s = t;
  r.algbw_GBps = static_cast<double>(bytes) / t / 1e9;
  r.busbw_GBps = r.algbw_GBps * busbw_factor(parse_coll_kind(op, "--ops"), ranks);
  return r;
}

void print_row(const calib::CollectiveRecord& r) {
  std::printf("%-15s ranks %3d nodes %2d %14llu B %12.2f us %9.2f GB/s algbw %9.2f GB/s busbw\n",
              r.op.c_str(), r.ranks, r.nodes, static_cast<unsigned long long>(r.bytes),
              r.time_s * 1e6, r.algbw_GBps, r.busbw_GBps);
  std::fflush(stdout);
}

}  // namespace

void run_collectives_single(Context& ctx, int ngpus) {
  std::vector<int> counts = ctx.opt.ranks;
  if (counts.empty()) {
    for (int r = 2; r <= ngpus; r *= 2) counts.push_back(r);
    if (ngpus >= 2 && (counts.empty() || counts.back() != ngpus)) counts.push_back(ngpus);
  }
  if (ngpus < 2 || counts.empty()) {
    std::printf("collectives: skipped: %d GPU(s) visible; NCCL collectives need at least 2\n",
                ngpus);
    return;
  }
  for (int r : counts) {
    if (r < 2 || r > ngpus)
      throw HarnessError(
          kExitBadArgs,
          fmt::format("--ranks: {} is not between 2 and the {} visible GPUs", r, ngpus));
    std::vector<int> devs(r);
    std::iota(devs.begin(), devs.end(), 0);
    std::vector<ncclComm_t> comms(r);
    ctx.watchdog->arm(ctx.opt.timeout_s, {}, fmt::format("ncclCommInitAll over {} GPUs", r));
    NCCL_CHECK(ncclCommInitAll(comms.data(), r, devs.data()));
    ctx.watchdog->disarm();
    std::vector<Member> ms(r);
    for (int i = 0; i < r; ++i) {
      ms[i].device = i;
      ms[i].rank = i;
      ms[i].nranks = r;
      ms[i].comm = comms[i];
      alloc(ms[i], ctx.opt.max_bytes);
    }
    for (const auto& op : ctx.opt.ops)
      for (std::uint64_t bytes :
           sweep_sizes(ctx.opt, sizeof(float) * static_cast<std::uint64_t>(r))) {
        double t =
            time_one(ctx, op, bytes, ms, fmt::format("{} of {} B over {} GPUs", op, bytes, r));
        auto rec = make_record(op, r, 1, bytes, t);
        rec.gpus_per_thread = r;  // this thread launches every GPU's part of each call
        ctx.record(calib::to_json(rec));
        print_row(rec);
      }
    for (auto& m : ms) release(m);
  }
}

void run_collectives_mpi(Context& ctx) {
#ifdef ZEROSIM_HAVE_MPI
  ncclUniqueId id;
  if (ctx.world_rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  Member world;
  world.device = ctx.local_rank;
  world.rank = ctx.world_rank;
  world.nranks = ctx.world_size;
  CUDA_CHECK(cudaSetDevice(world.device));
  ctx.watchdog->arm(ctx.opt.timeout_s, {}, "ncclCommInitRank (world)");
  NCCL_CHECK(ncclCommInitRank(&world.comm, ctx.world_size, id, ctx.world_rank));
  ctx.watchdog->disarm();
  struct GroupSpec {
    std::string name;
    int color, ranks, nodes;
  };
  const int node = ctx.world_rank / ctx.local_size;
  std::vector<GroupSpec> specs = {{"world", 0, ctx.world_size, ctx.nodes}};
  if (ctx.local_size > 1) specs.push_back({"node", node, ctx.local_size, 1});
  if (ctx.nodes > 1 && ctx.local_size > 1)
    specs.push_back({"rail", ctx.local_rank, ctx.nodes, ctx.nodes});
  for (const auto& g : specs) {
    Member m = world;
    if (g.name != "world") {
      ctx.watchdog->arm(ctx.opt.timeout_s, {world.comm}, "ncclCommSplit (" + g.name + ")");
      NCCL_CHECK(ncclCommSplit(world.comm, g.color, ctx.world_rank, &m.comm, nullptr));
      ctx.watchdog->disarm();
      NCCL_CHECK(ncclCommUserRank(m.comm, &m.rank));
      NCCL_CHECK(ncclCommCount(m.comm, &m.nranks));
    }
    alloc(m, ctx.opt.max_bytes);
    for (const auto& op : ctx.opt.ops)
      for (std::uint64_t bytes :
           sweep_sizes(ctx.opt, sizeof(float) * static_cast<std::uint64_t>(g.ranks))) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = time_one(ctx, op, bytes, {m},
                            fmt::format("{} of {} B over the {} group(s)", op, bytes, g.name));
        double tmax = 0;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);  // the slowest rank defines the time
        if (ctx.world_rank == 0) {
          auto rec = make_record(op, g.ranks, g.nodes, bytes, tmax);
          ctx.record(calib::to_json(rec));
          print_row(rec);
        }
      }
    CUDA_CHECK(cudaFree(m.send));
    CUDA_CHECK(cudaFree(m.recv));
    CUDA_CHECK(cudaStreamDestroy(m.stream));
    if (g.name != "world") NCCL_CHECK(ncclCommDestroy(m.comm));
  }
  NCCL_CHECK(ncclCommDestroy(world.comm));
#else
  (void)ctx;
  throw HarnessError(kExitBadArgs, "--mpi: this zerosim-calibrate was built without MPI");
#endif
}

}  // namespace zerosim::harness
