// The fetch trace: the order in which DeepSpeed stage 3 runs (and so fetches) a micro-step's
// modules, and which of those runs find the weights still gathered.
//
// Forward runs the modules in order. Backward runs them in reverse, except that a checkpointed
// layer first replays its forward (its submodules in forward order, each fetched by its forward
// hook), then runs their backwards in reverse (each fetched by its backward hook). After each run
// DeepSpeed releases the module's weights unless they are used again within
// stage3_max_reuse_distance parameters: it walks the trace from the next run, adding every run's
// parameters (repeats included), and keeps the weights if their module comes up before the sum
// reaches the distance. So with the default 1e9 a layer's projection is gathered once for its
// recompute and its backward when 18 h^2 < 1e9 (the fused QKV: between its two runs lie the
// attention output, both MLP projections twice and the attention output again), and twice when
// the layer is wider.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/workload/transformer.hpp"

namespace zerosim {

enum class FetchPass : std::uint8_t { Forward, Recompute, Backward };

struct FetchRun {
  int module = 0;  // index into the forward-order module list
  FetchPass pass = FetchPass::Forward;
  bool gather = true;  // false: still gathered since the module's previous run
};

// One micro-step's forward runs, then its backward runs. `checkpointing` replays the recomputed
// modules' forwards layer by layer; reuse_distance is stage3_max_reuse_distance (0: every run
// gathers).
std::vector<FetchRun> fetch_trace(const std::vector<Module>& modules, bool checkpointing,
                                  std::int64_t reuse_distance);

// Per run, the weights (elements) gathered while it runs: its module's and those kept for a later
// run (prefetched modules not included). DeepSpeed prefetches only while these and the weights in
// flight stay below stage3_max_live_parameters.
std::vector<std::int64_t> held_elems(const std::vector<FetchRun>& runs,
                                     const std::vector<Module>& modules);
// Elements module m gathers beyond its own parameters: a tied head's word embedding (0 for any
// other module).
std::int64_t borrowed_elems(const Module& m);
// Appends to `out` the tensors a run of module m gathers, as DeepSpeed's parameter trace lists
// them (partitioned_param_coordinator.py record_parameters: a module's parameters sorted by ds_id,
// i.e. in creation order): a tied head's word embedding first (created with the embedding), then
// the module's own parameters. Their elements; a module with no tensors but gather_elems gathers
// one tensor of that size.
void append_gathered_tensor_elems(const Module& m, std::vector<std::int64_t>& out);

// DeepSpeed's prefetch over a sequence of runs (partitioned_param_coordinator.py fetch_sub_module,
// the same in 0.10.0, 0.13.2 and 0.19.5), at parameter granularity; the lowering passes a whole
// micro-step, forward then backward, as the coordinator's queue (__param_queue, rebuilt in
// reset_step from __param_order) holds the recorded trace of both, one entry per parameter of
// every run (append_gathered_tensor_elems). In run k's hook, after its own waits, the coordinator
// pops run k's parameters not popped before, then pops the queue's next parameters and starts the
// gathers of those that are released (NOT_AVAILABLE), counting each one's full ds_numel, while the
// elements it started in this call are below min(stage3_prefetch_bucket_size,
// stage3_max_live_parameters - __n_available_params), where __n_available_params counts the
// weights held at run k (held[k]: its own and those kept for a later run) and those in flight. So
// a hook can stop inside a run's parameter list: the rest is started by a later hook's prefetch,
// or gathered by the run's own hook. A popped parameter whose weights are in flight or held (its
// module runs between k and it, or is run k's) is popped but not counted, and fetched in its own
// hook if released by then; what is popped stays popped. The sequence's first run is fetched at
// its start. A bucket of 0 prefetches nothing.
struct PrefetchPlan {
  std::vector<std::size_t> first;       // per run j: its first tensor (count + 1 entries)
  std::vector<std::int64_t> elems;      // per tensor: its elements
  std::vector<std::ptrdiff_t> by;       // per tensor: the run whose hook starts its gather, or -1
  std::vector<std::int64_t> in_flight;  // per run k: elements in flight after k's hook
};
PrefetchPlan prefetch_plan(const FetchRun* runs, const std::int64_t* held, std::size_t count,
                           const std::vector<Module>& modules, std::int64_t bucket_elems,
                           std::int64_t max_live);

// The most of held_elems over the runs.
std::int64_t max_held_elems(const std::vector<FetchRun>& runs, const std::vector<Module>& modules);

}  // namespace zerosim
