// Lowering: one training step (G micro-steps + optimizer) of a resolved scenario to a StepProgram,
// following the framework that runs the strategy. Ranks are identical, so the program is rank 0's;
// each Collective carries every group that runs it at that moment. lower_step hands the setup to
// its family's lowering (lower_deepspeed.cpp, lower_fsdp.cpp: the streams and order of PyTorch
// FSDP's are documented there), written with the machinery of program_builder.hpp.
//
// DeepSpeed (stages 1-3, HSDP, ZeRO++, offload):
// Streams: "compute" (forward, recompute, backward, optimizer), "allgather" (weight gathers with
// qwZ's quantize kernel), "reduce" (gradient reduction with qgZ's kernels), "fetch" (stage 3's
// re-assembly of gathered weights: qwZ's dequantize and the cat), "host" (stage 3: the host
// thread's dispatch of each gather's launch and re-assembly, at CostProfile::host_op_s per op;
// CPU Adam under ZeRO-Offload) and, when qgZ's two hops are pipelined over chunks,
// "reduce.inter" (hop 2). Per micro-step forward: module i's gather may start once compute of
// the module whose hook prefetched it has started (DeepSpeed's coordinator: each hook starts up
// to stage3_prefetch_bucket_size new elements, bounded by stage3_max_live_parameters; a module
// not prefetched is gathered once module i-1 has finished) and the host has dispatched its
// launch; compute of module i waits for its re-assembly, which waits for
// the gather and the host's dispatch (the host waits for the re-assembly three parameter waits
// back). Backward follows the fetch trace (fetch_trace.hpp: each checkpointed layer's recompute,
// then its backwards in reverse, gathering only the runs whose weights DeepSpeed's reuse distance
// released) with the same prefetch rule, and hands each gradient bucket to the reduce stream when
// the module holding its last tensor has finished; the micro-step ends when every bucket is
// reduced.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "sim/profile/cost_profile.hpp"
#include "sim/program/step_program.hpp"
#include "sim/step/compute_model.hpp"
#include "sim/strategy/buckets.hpp"
#include "sim/strategy/fetch_trace.hpp"
#include "sim/strategy/quant_groups.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/module_cache.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

// ZeRO-Offload's rates, per rank (resolved from the cluster's node type by simulate()). All 0 when
// nothing is offloaded.
struct OffloadRates {
  double pcie_Bps = 0;       // host <-> GPU copies, per direction: PCIe x16 x kPcieCopyEfficiency
  double host_adam_pps = 0;  // CPU Adam, parameters per second: kHostAdamParamsPerS / GPUs per node
  double nvme_Bps = 0;       // node's drives x kNvmeDriveGBps / GPUs per node, per direction
  bool operator==(const OffloadRates&) const = default;
};

// Pinned host <-> device copies reach about 0.8 of the PCIe x16 payload rate (assumed, from
// CUDA's bandwidthTest as commonly reported: 12-13 GB/s on gen3 x16 of 15.75, 24-26 GB/s on
// A100's gen4 of 31.5, 50-55 GB/s on H100's gen5 of 63; about 0.76-0.87). The copies of one GPU
// are priced on its own x16 link: upstream links a PCIe switch shares between GPUs and NICs are
// not modelled, so this is the fastest a copy can be.
inline constexpr double kPcieCopyEfficiency = 0.8;
// DeepSpeed's CPU Adam (DeepSpeedCPUAdam, AVX-512 + OpenMP over the node's cores), parameters
// updated per second per node. Evidence: ZeRO-Offload (Ren et al., USENIX ATC 2021, table 3)
// measures 1.11 s for 1B parameters on a DGX-2's two 24-core Xeon Platinum 8168 (about 0.9e9
// parameters/s; PyTorch's CPU Adam 7.03 s, 6.3x slower), 10.9 s for 10B: linear in the
// parameters. With about 30 bytes per parameter read and written (FP32 master, momentum,
// variance, FP32 gradient, FP16 parameter) that is about 27 GB/s of host memory traffic. Newer
// hosts (DGX H100's 2x 56-core Xeon 8480C) have 2-3x the cores and memory bandwidth and should be
// faster by up to that: the figure is the measured one, a floor for them, not a fit.
inline constexpr double kHostAdamParamsPerS = 0.9e9;

struct StepSetup {
  ModelShape model;
  Strategy strategy;        // hpz_size resolved
  std::int64_t tokens = 0;  // per GPU per micro-step
  int seq = 0;
  int grad_accum = 1;
  bool checkpointing = true;
  AttentionImpl attention = AttentionImpl::Eager;  // resolved from the scenario's --attention
  int prefetch_depth = 1;  // FSDP's units gathered ahead (DeepSpeed's coordinator decides its own)
  bool labels = true;      // op names for traces; false: every label -1 (traces would say "op")
  OffloadRates offload;    // the strategy's offload_optimizer / offload_param devices' rates
};

// Compute time of a module's forward and backward: the sum of its kernel classes' terms
// (compute_model.hpp).
double forward_time(const Module& m, const CostProfile& p, AttentionImpl attention);
double backward_time(const Module& m, const CostProfile& p, AttentionImpl attention);

// qwZ's FP32 scales for a gather of module m over `ranks` ranks, its parameters partitioned over
// `shard_ranks` (qwz_scale_bytes, quant_groups.hpp; 0 without qwZ), gathered with an all-gather
// of their own after the INT8 data's. `groups` keeps the group counts (null: computed each time).
double gathered_scale_bytes(const Module& m, int ranks, int shard_ranks, const Strategy& s,
                            QwzGroupCounter* groups = nullptr);
// Bytes on the wire for that gather: FP16, or INT8 (weight_bits) and the scales.
double gathered_bytes(const Module& m, int ranks, int shard_ranks, const Strategy& s,
                      QwzGroupCounter* groups = nullptr);

// Where a collective belongs in the step (the result's comm.by_phase).
// ParameterGather: stages 1 and 2 all-gather the updated parameters after the optimizer.
enum class CommPhase : std::uint8_t {
  BackwardGather,
  ForwardGather,
  GradientReduction,
  ParameterGather
};

struct LoweredStep {
  StepProgram program;
  std::shared_ptr<const std::vector<Module>> modules;  // build_modules(model, tokens, seq)
  std::vector<GradBucket> buckets;
  std::vector<FetchRun> trace;  // one micro-step's runs (fetch_trace): forward's, then backward's
  std::vector<CommPhase> collective_phase;  // per program.collectives entry
  // Stage 3's gathers for runs of both the forward and the backward (a hook's prefetch call that
  // spans them): per such collective, its index and the share of its bytes in collective_phase
  // (the phase of its first run); the rest is the other gather phase's.
  struct PhaseSplit {
    std::size_t collective = 0;
    double share = 1;
    bool operator==(const PhaseSplit&) const = default;
  };
  std::vector<PhaseSplit> phase_splits;
  // Per stream, its collectives in op order: where each sits among the stream's timed ops (its
  // entry in a run's lane) and its index. The comm sums read the collectives' times from there
  // without visiting every op.
  struct CollectiveSlot {
    int timed = 0, collective = 0;
    bool operator==(const CollectiveSlot&) const = default;
  };
  std::vector<std::vector<CollectiveSlot>> collective_slots;
  bool qgz_active = false;
  // Stage 3's prefetch (DeepSpeed's coordinator): the most runs, and the most elements, whose
  // gathers are in flight ahead of the running one at once.
  int prefetch_runs = 0;
  std::int64_t prefetched_elems = 0;
  // The most gathered elements live at once: a run's held weights (its own and those kept for a
  // later run) plus those in flight after its hook, at the same run.
  std::int64_t live_elems = 0;
  // The most of held_elems(trace, modules) over the runs (max_held_elems; 0 without a trace).
  std::int64_t max_held_elems = 0;
  // Stage 3's largest all_gather_coalesced call: its elements and, under qwZ, the FP32 scales its
  // INT8 gather brings over the whole shard group (the memory model's receive buffers).
  std::int64_t largest_call_elems = 0;
  double largest_call_scale_bytes = 0;
  double optimizer_bytes = 0;  // read and written by the GPU optimizer (0 when offloaded)
  // Bytes one rank moves per step for ZeRO-Offload: host -> GPU and GPU -> host over PCIe, and
  // from / to the node's NVMe drives.
  struct OffloadBytes {
    double h2d = 0, d2h = 0, nvme_read = 0, nvme_write = 0;
    bool operator==(const OffloadBytes&) const = default;
  };
  OffloadBytes offload_bytes;
  // The ops whose durations depend on the tokens per micro-step: module compute ops (forward,
  // recompute, backward) on the compute stream, by op index. Everything else (collective and
  // kernel sizes, buckets, the optimizer) follows from parameter counts.
  struct ModuleOp {
    int op = 0, module = 0;
    bool backward = false;  // the backward time; else the forward time
  };
  std::vector<ModuleOp> module_ops;
  // The event the compute stream records when micro-step 0 has ended and every stream it waits
  // for is drained (-1: the lowering marks none). A run of the same step with more micro-steps
  // begins with the same ops up to there, so it can go on from a snapshot of this step's run
  // taken at that Record (step_program.hpp resume_program).
  int first_micro_step_end = -1;
  std::vector<std::uint8_t> module_time_signs;  // per module: bit 0 forward > 0, bit 1 backward > 0
  std::int64_t tokens = 0;                      // what the durations are for
};

// The group lists of rank layouts, built once per layout for one SimContext: building them was a
// tenth of a fresh lowering, and one list object is found first by its address in the network's
// plan lookups (GroupList compares by content after that). Keyed by content: the layout, the GPU
// count, GPUs per node and the block size of the intra-node and hpZ lists (0 for the others).
class GroupListCache {
 public:
  // Strided: groups of the ranks at the same position in consecutive blocks of k (HSDP replicas).
  enum class Layout : char { World, IntraNode, Rails, Blocks, Strided };
  template <class Build>
  GroupList get(Layout what, int gpus, int per_node, int k, Build build) {
    const Key key{what, gpus, per_node, k};
    if (const auto it = lists_.find(key); it != lists_.end()) return it->second;
    // Bounded by the ranks held (a list holds each rank once), not by the number of lists: a
    // sweep over many cluster sizes needs four small lists per size.
    if (held_ranks_ + static_cast<std::size_t>(gpus) > kMaxHeldRanks) {
      lists_.clear();
      held_ranks_ = 0;
    }
    held_ranks_ += static_cast<std::size_t>(gpus);
    return lists_.emplace(key, GroupList(build())).first->second;
  }

 private:
  static constexpr std::size_t kMaxHeldRanks = std::size_t{1} << 20;  // 4 MiB of rank ids
  using Key = std::tuple<Layout, int, int, int>;
  std::map<Key, GroupList> lists_;
  std::size_t held_ranks_ = 0;
};

// Of `topo` only the rank layout is read (GPU count, GPUs per node, node count: the group lists
// and whether qgZ has an inter-node hop); LoweringCache relies on that. `modules` and `groups`:
// the context's caches of the modules and group lists (null: built afresh, the same content).
LoweredStep lower_step(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                       ModuleCache* modules = nullptr, GroupListCache* groups = nullptr);

// The forward and backward time of every module of a model at some tokens per micro-step under a
// profile: what re-timing writes. Scenarios that differ in strategy or accumulation share it.
struct ModuleTimesTable {
  std::shared_ptr<const std::vector<Module>> modules;  // build_modules(model, tokens, seq)
  std::int64_t tokens = 0;
  AttentionImpl attention = AttentionImpl::Eager;
  std::vector<std::pair<double, double>> times;  // per module: forward, backward
  std::vector<std::uint8_t> signs;               // as LoweredStep::module_time_signs
};
ModuleTimesTable module_times_table(const StepSetup& setup, const CostProfile& profile,
                                    ModuleCache* modules = nullptr);

// Turns `low`, lowered from a setup equal to the table's but for its tokens, into lower_step's
// result for the table's tokens: the module compute ops get those durations (the same arithmetic,
// so the same bits). false when that cannot be done (a module's time changes sign, so an op would
// appear or vanish); `low` is then untouched but must be lowered afresh.
bool retime_lowered_step(LoweredStep& low, const ModuleTimesTable& table);

}  // namespace zerosim
