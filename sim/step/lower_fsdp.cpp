// PyTorch FSDP's lowering policy (FSDP1, FullyShardedDataParallel): FULL_SHARD, SHARD_GRAD_OP and
// HYBRID_SHARD with backward_prefetch, forward_prefetch, limit_all_gathers and mixed precision, as
// torch/distributed/fsdp/_runtime_utils.py runs them (the copies in
// shared/reference/pytorch-fsdp/; function names below are that file's unless said otherwise).
//
// Units: each transformer block is one FSDP unit (one FlatParameter), the root unit holds what no
// block holds (embedding, final norm, untied head). The CPU issues the hooks in program order and
// runs ahead of the GPU; it blocks only in the rate limiter (_unshard: with limit_all_gathers,
// once two free events are queued, it synchronizes on the oldest before issuing the next
// all-gather; _limiter_utils.py, _FreeEventQueue). A CPU block delays every op issued after it;
// all but the next all-gather are later than the event in their own stream order anyway, so the
// block is a wait of that all-gather on the event.
//
// Streams: "compute" (the default stream) and "nccl": the shard process group's NCCL stream, on
// which the unshard stream's all-gathers and the post-backward stream's reduce-scatters run in the
// order the CPU issues them (api.py, BackwardPrefetch: "any collectives, even if issued from
// different streams, contend for the same per-device NCCL stream"). HYBRID_SHARD adds
// "nccl.inter", the inter-node process group's stream of the gradient all-reduces.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/step/fsdp_lowering.hpp"

namespace zerosim::lowering {
namespace {

enum FsdpStream { kNccl = 1, kNcclInter = 2 };

// An FSDP unit's runtime state (FlatParamHandle / _FSDPState's per-handle dictionaries).
struct Fsdp1Unit : FsdpUnit {
  bool sharded = true;              // the unsharded flat parameter is freed
  bool prefetched = false;          // _handles_prefetched
  bool needs_pre_forward = false;   // _needs_pre_forward_unshard
  bool needs_pre_backward = false;  // _needs_pre_backward_unshard
};

class Fsdp1Lowering : public FsdpLowering<Fsdp1Lowering, Fsdp1Unit> {
 public:
  Fsdp1Lowering(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                ModuleCache* modules, GroupListCache* groups, LoweredStep& out)
      : FsdpLowering(setup, topo, profile, modules, groups, out) {
    add_stream("nccl");  // kNccl
    // HYBRID_SHARD: FULL_SHARD within each node's process group, the gradient shards
    // all-reduced across the replicas (_post_backward_hook: allreduce_hook on _inter_node_state).
    mesh_ = shard_groups();
    if (!mesh_.replicas.empty()) add_stream("nccl.inter");  // kNcclInter
  }

 private:
  friend FsdpLowering;
  using Unit = Fsdp1Unit;
  // A unit's waits, records and collectives per micro-step, at most (FsdpLowering::build).
  static constexpr std::size_t kOpsPerUnit = 12, kPrefixesPerUnit = 4;

  // _unshard: with limit_all_gathers the CPU first synchronizes on the oldest free event once two
  // are queued (_FreeEventQueue.dequeue_if_needed); then, if the flat parameter is sharded,
  // all-gathers it on the unshard stream (FlatParamHandle.unshard is a no-op otherwise).
  void unshard(Unit& u, CommPhase phase, int phase_piece) {
    if (st_.fsdp.limit_all_gathers && free_events_.size() >= kMaxInflightAllGathers) {
      cpu_after_ = free_events_.front();
      free_events_.pop_front();
    }
    if (!u.sharded) return;
    if (cpu_after_ != waited_cpu_after_) {
      wait(kNccl, cpu_after_);
      waited_cpu_after_ = cpu_after_;
    }
    collective(kNccl, CollKind::AllGather, mesh_.algo, mesh_.shard, gather_bytes(u),
               Category::AllGather, phase, prefix(phase_piece, u.piece), ".ag");
    last_unshard_ = event();
    record(kNccl, last_unshard_);
    u.sharded = false;
  }
  // _reshard: frees the unsharded flat parameter; with limit_all_gathers a free event recorded on
  // the compute stream joins the queue.
  void reshard(Unit& u, bool free) {
    if (!free) return;
    u.sharded = true;
    u.prefetched = false;
    if (st_.fsdp.limit_all_gathers) {
      const int ev = event();
      record(kCompute, ev);
      free_events_.push_back(ev);
    }
  }
  // The compute stream waits for the unshard stream (current_stream().wait_stream(unshard)): for
  // the last all-gather issued.
  void wait_unshard() {
    if (last_unshard_ != waited_unshard_) {
      wait(kCompute, last_unshard_);
      waited_unshard_ = last_unshard_;
    }
  }
  // _prefetch_handles / _get_handles_to_prefetch with the default prefetch limit of 1: the next
  // unit of the pre-forward order (forward) or the previous one of the post-forward order
  // (backward), when it still needs its unshard and is not prefetched.
  void prefetch_forward(std::size_t u, int phase_piece) {
    if (!st_.fsdp.forward_prefetch || u + 1 >= units_.size()) return;
    Unit& t = units_[u + 1];
    if (!t.needs_pre_forward || t.prefetched) return;
    unshard(t, CommPhase::ForwardGather, phase_piece);
    t.prefetched = true;
  }
  void prefetch_backward(std::size_t u, int phase_piece) {
    // Post-forward order: blocks 1..L, then the root (its forward ends last).
    const std::size_t target = u == 0 ? units_.size() - 1 : u - 1;
    if (target == 0) return;  // before block 1 in post-forward order: nothing
    Unit& t = units_[target];
    if (!t.needs_pre_backward || t.prefetched) return;
    unshard(t, CommPhase::BackwardGather, phase_piece);
    t.prefetched = true;
  }

  // _pre_forward with _pre_forward_unshard (the root first runs _root_pre_forward, whose
  // _wait_for_computation_stream makes the unshard stream wait for the compute stream).
  void pre_forward(std::size_t i, int phase_piece) {
    Unit& u = units_[i];
    if (u.root) {
      if (st_.fsdp.forward_prefetch)
        for (Unit& t : units_) t.needs_pre_forward = true;
      after(kCompute, kNccl);
    }
    if (!u.prefetched) unshard(u, CommPhase::ForwardGather, phase_piece);
    u.needs_pre_forward = false;
    wait_unshard();
    prefetch_forward(i, phase_piece);
  }
  // _post_forward / _post_forward_reshard: FULL_SHARD and HYBRID_SHARD free a non-root unit's
  // parameters (RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES), SHARD_GRAD_OP keeps them for backward;
  // the root keeps its own. _register_pre_backward_hooks marks the unit as needing its
  // pre-backward unshard.
  void post_forward(std::size_t i, int /*phase_piece*/) {
    Unit& u = units_[i];
    reshard(u, !u.root && st_.fsdp.sharding != FsdpSharding::ShardGradOp);
    u.needs_pre_backward = true;
  }

  // _pre_backward_hook: the unit's unshard unless prefetched, the compute stream's wait, then
  // BACKWARD_PRE's prefetch.
  void pre_backward(std::size_t i, int phase_piece) {
    Unit& u = units_[i];
    if (u.needs_pre_backward && !u.prefetched) unshard(u, CommPhase::BackwardGather, phase_piece);
    if (u.needs_pre_backward) wait_unshard();
    u.needs_pre_backward = false;
    if (st_.fsdp.backward_prefetch == BackwardPrefetch::Pre) prefetch_backward(i, phase_piece);
  }
  // _post_backward_hook: reshard (_should_free_in_backward: every sharded strategy frees when
  // gradients are synchronized), BACKWARD_POST's prefetch, then on the post-backward stream,
  // after the gradient computation: the reduce-scatter in reduce_dtype and, for HYBRID_SHARD,
  // the all-reduce of the shard across the replicas.
  void post_backward(std::size_t i, int phase_piece) {
    Unit& u = units_[i];
    reshard(u, true);
    if (st_.fsdp.backward_prefetch == BackwardPrefetch::Post) prefetch_backward(i, phase_piece);
    const int pre = prefix(phase_piece, u.piece);
    after(kCompute, kNccl);
    // The post-backward stream runs its reductions in order: this unit's reduce-scatter after the
    // previous unit's all-reduce.
    if (post_backward_tail_ >= 0) wait(kNccl, post_backward_tail_);
    reduce_scatter(kNccl, u, pre);
    post_backward_tail_ = -1;
    if (!mesh_.replicas.empty()) {
      after(kNccl, kNcclInter);
      all_reduce_replicas(kNcclInter, u, pre);
      post_backward_tail_ = event();
      record(kNcclInter, post_backward_tail_);
    }
  }

  // _post_backward_final_callback: the compute stream waits for the post-backward stream; the
  // prefetch and pre-backward states are cleared.
  void final_callback() {
    if (post_backward_tail_ >= 0) {
      wait(kCompute, post_backward_tail_);
      post_backward_tail_ = -1;
    }
    join(kNccl);
    for (Unit& u : units_) u.prefetched = u.needs_pre_backward = false;
  }

  static constexpr std::size_t kMaxInflightAllGathers = 2;  // _FreeEventQueue
  std::deque<int> free_events_;                             // the rate limiter's queue
  int cpu_after_ = -1, waited_cpu_after_ = -1;  // the last event the CPU synchronized on
  int last_unshard_ = -1, waited_unshard_ = -1;
  int post_backward_tail_ = -1;  // the last all-reduce (HYBRID_SHARD)
};

}  // namespace

void lower_fsdp(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                ModuleCache* modules, GroupListCache* groups, LoweredStep& out) {
  Fsdp1Lowering(setup, topo, profile, modules, groups, out).build();
}

}  // namespace zerosim::lowering
