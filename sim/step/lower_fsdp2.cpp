// PyTorch FSDP2's lowering policy (fully_shard, torch/distributed/fsdp/_fully_shard/ in
// shared/reference/pytorch-fsdp/; function names below are _fsdp_param_group.py's, FSDPParamGroup,
// unless said otherwise), where it differs from FSDP1 (lower_fsdp.cpp):
//
// - Per-parameter sharding (DTensor, Shard(0)): a unit's all-gather first copies each parameter's
//   shard into one flat input (foreach_all_gather: all_gather_copy_in, on the all-gather copy-in
//   stream), and after the all-gather copies the output out into the unsharded parameters
//   (wait_for_unshard: foreach_all_gather_copy_out, split_with_sizes_copy on the compute stream).
//   The gradients are copied into one reduce-scatter input (foreach_reduce: chunk_cat, on the
//   reduce-scatter stream). The copies are priced by the profile's "copy" kernel (bytes read +
//   written at its HBM rate).
// - No rate limiter: the CPU issues each unit's all-gather at its pre-forward, running ahead; the
//   bound is the all-gather streams' wait, in the next unit's wait_for_unshard, on the previous
//   unit's copy-out event (AllGatherState, "implicit prefetching"). In backward the all-gather
//   streams wait on each copy-out at once, and the next unit in reverse post-forward order is
//   prefetched (_backward_prefetch, one module).
// - reshard_after_forward (FsdpOptions): true frees the blocks after forward and gathers them again
//   in backward; false keeps them; an int n reshards to n ranks (_to_sharded_post_forward, a copy
//   of the local 1/n on the compute stream) and the backward's all-gather runs within groups of n.
//   The root keeps its parameters (_fsdp_state.py, _lazy_init: the root's post_forward_mesh_info
//   is None when reshard_after_forward is left to its default).
// - The reduce-scatter runs from its own stream; before a unit's reduction the compute stream
//   waits for the previous unit's reduce-scatter (post_backward: reduce_scatter_states), and the
//   root's final callback for the last.
// - A 2-D mesh (replicate, shard) is HSDP (fully_shard's mesh argument): the all-gathers and the
//   reduce-scatter run within the shard groups of S consecutive ranks, and foreach_reduce
//   (_fsdp_collectives.py) all-reduces the reduce-scatter's output across the replicate group on
//   the all-reduce stream, after waiting for the reduce-scatter stream. Nothing in the backward
//   waits for it but the root's final callback (finalize_backward: _post_reduce_event).
//
// Streams: "compute", "copy_in" (the all-gather copy-in stream), "rs" (the reduce-scatter
// stream's copies), "nccl": the shard group's NCCL stream, on which all-gathers and
// reduce-scatters run in the order they are issued, as in FSDP1, and on a 2-D mesh "nccl.ar":
// the replicate group's NCCL stream.
#include <cstdint>
#include <vector>

#include "sim/step/fsdp_lowering.hpp"

namespace zerosim::lowering {
namespace {

enum Fsdp2Stream { kNccl = 1, kCopyIn = 2, kReduceScatter = 3, kAllReduce = 4 };

// One FSDPParamGroup's state: a block's parameters, or the root's (what no block holds).
struct Fsdp2Unit : FsdpUnit {
  bool unsharded = false;     // is_unsharded
  bool post_forward = false;  // is_sharded_post_forward (an int reshard_after_forward)
  bool gathering = false;     // _all_gather_result pending its wait
  int gather_event = -1;      // the all-gather's end on the NCCL stream
  int reshard_event = -1;     // _reshard_after_forward_event
};

class Fsdp2Lowering : public FsdpLowering<Fsdp2Lowering, Fsdp2Unit> {
 public:
  Fsdp2Lowering(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                ModuleCache* modules, GroupListCache* groups, LoweredStep& out)
      : FsdpLowering(setup, topo, profile, modules, groups, out) {
    add_stream("nccl");     // kNccl
    add_stream("copy_in");  // kCopyIn
    add_stream("rs");       // kReduceScatter
    mesh_ = shard_groups();
    if (!mesh_.replicas.empty()) add_stream("nccl.ar");  // kAllReduce
    const int r = st_.fsdp.reshard_after_forward;
    if (r > 1) post_forward_ = block_groups(r);
  }

 private:
  friend FsdpLowering;
  using Unit = Fsdp2Unit;
  // A unit's waits, records and collectives per micro-step, at most (FsdpLowering::build).
  static constexpr std::size_t kOpsPerUnit = 16, kPrefixesPerUnit = 6;

  // The all-gather streams (copy-in, then the all-gather on the NCCL stream) wait for `ev`
  // (_wait_all_gather_streams_on_event).
  void all_gather_streams_wait(int ev) {
    wait(kCopyIn, ev);
    wait(kNccl, ev);
  }

  // unshard: a no-op when unsharded; else copy-in of the local shard (of the post-forward shard
  // after an int reshard), then the all-gather over the shard groups (or the post-forward
  // groups).
  void unshard(Unit& u, CommPhase phase, int phase_piece) {
    if (u.unsharded || u.gathering) return;
    if (u.reshard_event >= 0) {
      all_gather_streams_wait(u.reshard_event);
      u.reshard_event = -1;
    }
    const bool small_mesh = u.post_forward;
    const double ranks = small_mesh ? st_.fsdp.reshard_after_forward : mesh_.size;
    const int pre = prefix(phase_piece, u.piece);
    kernel(kCopyIn, Category::Other, "copy", 2 * gather_bytes(u) / ranks, pre, ".copy_in");
    after(kCopyIn, kNccl);
    collective(kNccl, CollKind::AllGather, small_mesh ? Algorithm::Ring : mesh_.algo,
               small_mesh ? post_forward_ : mesh_.shard, gather_bytes(u), Category::AllGather,
               phase, pre, ".ag");
    u.gather_event = event();
    record(kNccl, u.gather_event);
    u.gathering = true;
  }
  // wait_for_unshard: the compute stream waits for the all-gather and copies the output out into
  // the unsharded parameters. In forward the all-gather streams then wait on the previous unit's
  // copy-out (AllGatherState, freed after this copy-out); in backward on this one's.
  void wait_for_unshard(Unit& u, bool forward, int phase_piece) {
    if (!u.gathering) return;
    wait(kCompute, u.gather_event);
    if (forward && last_copy_out_ >= 0) all_gather_streams_wait(last_copy_out_);
    kernel(kCompute, Category::Other, "copy", 2 * gather_bytes(u), prefix(phase_piece, u.piece),
           ".copy_out");
    const int copied = event();
    record(kCompute, copied);
    if (forward)
      last_copy_out_ = copied;
    else
      all_gather_streams_wait(copied);
    u.gathering = false;
    u.unsharded = true;
    u.post_forward = false;
  }
  // reshard after forward: true frees to the shard, an int copies the local 1/n out
  // (_to_sharded_post_forward) and records the event the next all-gather waits on; false, and the
  // root, keep the parameters.
  void reshard_after_forward(Unit& u, int phase_piece) {
    const int r = st_.fsdp.reshard_after_forward;
    if (u.root || r == 0) return;
    u.unsharded = false;
    if (r > 1) {
      kernel(kCompute, Category::Other, "copy", 2 * gather_bytes(u) / r,
             prefix(phase_piece, u.piece), ".reshard");
      u.post_forward = true;
      u.reshard_event = event();
      record(kCompute, u.reshard_event);
    }
  }

  // The root's pre-forward first makes the all-gather streams wait for the compute stream; each
  // unit's pre-forward unshards it and waits (the root's post-forward keeps its parameters).
  void pre_forward(std::size_t i, int phase_piece) {
    if (i == 0) {
      after(kCompute, kCopyIn);
      last_copy_out_ = -1;
    }
    unshard(units_[i], CommPhase::ForwardGather, phase_piece);
    wait_for_unshard(units_[i], true, phase_piece);
  }
  void post_forward(std::size_t i, int phase_piece) {
    reshard_after_forward(units_[i], phase_piece);
  }

  // pre_backward: unshard and wait, then prefetch the previous unit of the post-forward order
  // (blocks 1..L, then the root: before the root comes block L; before block 1 nothing).
  void pre_backward(std::size_t i, int phase_piece) {
    unshard(units_[i], CommPhase::BackwardGather, phase_piece);
    wait_for_unshard(units_[i], false, phase_piece);
    const std::size_t target = i == 0 ? units_.size() - 1 : i - 1;
    if (target != 0) unshard(units_[target], CommPhase::BackwardGather, phase_piece);
  }
  // post_backward: reshard (free); the compute stream waits for the previous unit's
  // reduce-scatter; foreach_reduce on the reduce-scatter stream: chunk_cat of the gradients
  // (param_dtype in, reduce_dtype out), then the reduce-scatter over the shard groups and, on a
  // 2-D mesh, the all-reduce of its output across the replicas.
  void post_backward(std::size_t i, int phase_piece) {
    Unit& u = units_[i];
    u.unsharded = false;
    if (last_reduce_ >= 0) wait(kCompute, last_reduce_);
    const int pre = prefix(phase_piece, u.piece);
    after(kCompute, kReduceScatter);
    kernel(kReduceScatter, Category::Other, "copy",
           (st_.fsdp.param_bytes + st_.grad_comm_bytes) * u.elems, pre, ".chunk_cat");
    after(kReduceScatter, kNccl);
    reduce_scatter(kNccl, u, pre);
    last_reduce_ = event();
    record(kNccl, last_reduce_);
    if (mesh_.replicas.empty()) return;
    wait(kAllReduce, last_reduce_);  // all_reduce_stream.wait_stream(reduce_scatter_stream)
    all_reduce_replicas(kAllReduce, u, pre);
    last_all_reduce_ = event();
    record(kAllReduce, last_all_reduce_);
  }

  // The root's final callback (_fsdp_state.py, _root_post_backward_final_callback): the compute
  // stream waits for the last reduce-scatter.
  void final_callback() {
    wait(kCompute, last_reduce_);
    last_reduce_ = -1;
    if (last_all_reduce_ >= 0) wait(kCompute, last_all_reduce_);
    last_all_reduce_ = -1;
    join(kNccl);
  }

  GroupList post_forward_;
  int last_copy_out_ = -1;    // the forward's AllGatherState event
  int last_reduce_ = -1;      // the last reduce-scatter's event (reduce_scatter_states)
  int last_all_reduce_ = -1;  // the last all-reduce's event (the final callback's wait)
};

}  // namespace

void lower_fsdp2(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                 ModuleCache* modules, GroupListCache* groups, LoweredStep& out) {
  Fsdp2Lowering(setup, topo, profile, modules, groups, out).build();
}

}  // namespace zerosim::lowering
