// The step both FSDP lowerings build (FSDP1 lower_fsdp.cpp, FSDP2 lower_fsdp2.cpp): the units
// (fsdp_units); per micro-step the forward (the root's modules around the blocks', each unit
// between its pre- and post-forward hooks) and the backward (the reverse, a checkpointed block
// recomputed after its pre-backward hook, then the final callback); then Adam on each rank's
// shard of every parameter. What differs between FSDP1 and FSDP2 is what the hooks do, the
// streams and the ops they reserve per unit: the policy, the derived class. Private to the step
// module.
#pragma once
#include <cstddef>
#include <vector>

#include "sim/step/fsdp_units.hpp"
#include "sim/step/program_builder.hpp"

namespace zerosim::lowering {

// Policy (CRTP), reachable from this class: the hooks pre_forward, post_forward, pre_backward and
// post_backward(std::size_t unit, int phase_piece), final_callback(), and kOpsPerUnit /
// kPrefixesPerUnit, the ops and labels one unit adds per micro-step at most. Its constructor
// opens its streams and sets mesh_.
template <class Policy, class Unit>
class FsdpLowering : protected ProgramBuilder {
 public:
  void build() {
    load_modules();
    units_ = fsdp_units<Unit>(*out_.modules);
    const std::size_t G = static_cast<std::size_t>(s_.grad_accum), M = out_.modules->size(),
                      U = units_.size();
    // Per micro-step: a module's forward, recompute and backward ops, and the unit's.
    reserve(G * (4 * M + Policy::kOpsPerUnit * U), G * (3 * M + Policy::kPrefixesPerUnit * U),
            M + U + 2 * G + 1, G * 3 * U);
    name_modules();
    for (Unit& u : units_) u.piece = piece({u.root ? "root" : "unit", u.root ? "" : u.name});
    for (int mu = 0; mu < s_.grad_accum; ++mu) {
      forward(mu);
      backward(mu);
      if (mu == 0) {  // the compute stream has waited for the others (final_callback)
        out_.first_micro_step_end = event();
        record(kCompute, out_.first_micro_step_end);
      }
    }
    // Adam on the local shard of every parameter (FSDP's sharded FlatParameter, FSDP2's DTensor
    // shards).
    gpu_optimizer(static_cast<double>(total_params()) / mesh_.size, prefix(piece({"optimizer"})));
  }

 protected:
  using ProgramBuilder::ProgramBuilder;

  // Bytes of a unit's all-gather (MixedPrecision.param_dtype) and of its reduce-scatter input
  // (reduce_dtype; None: param_dtype).
  double gather_bytes(const Unit& u) const { return st_.fsdp.param_bytes * u.elems; }
  double reduce_bytes(const Unit& u) const { return st_.grad_comm_bytes * u.elems; }
  // The unit's gradient reduce-scatter over the shard groups, on `stream`.
  void reduce_scatter(int stream, const Unit& u, int pre) {
    collective(stream, CollKind::ReduceScatter, mesh_.algo, mesh_.shard, reduce_bytes(u),
               Category::ReduceScatter, CommPhase::GradientReduction, pre, ".rs");
  }
  // HYBRID_SHARD and a 2-D mesh: the all-reduce of the reduce-scatter's output (1/S of the
  // unit's gradient) across the replicas, on `stream`.
  void all_reduce_replicas(int stream, const Unit& u, int pre) {
    collective(stream, CollKind::AllReduce, Algorithm::Ring, mesh_.replicas,
               reduce_bytes(u) / mesh_.size, Category::AllReduce, CommPhase::GradientReduction, pre,
               ".ar");
  }

 private:
  Policy& policy() { return static_cast<Policy&>(*this); }

  void forward(int mu) {
    const int phase = piece({"mb", Digits(mu), ".fwd."});
    const auto run = [&](int m) {
      module_compute(Category::Compute, m, false, module_prefix(phase, m), "");
    };
    const Unit& root = units_[0];
    policy().pre_forward(0, phase);
    run(root.modules.front());  // the embedding
    for (std::size_t i = 1; i < units_.size(); ++i) {
      policy().pre_forward(i, phase);
      for (const int m : units_[i].modules) run(m);
      policy().post_forward(i, phase);
    }
    for (std::size_t k = 1; k < root.modules.size(); ++k) run(root.modules[k]);  // norm, head
    policy().post_forward(0, phase);
  }

  void backward(int mu) {
    const int phase = piece({"mb", Digits(mu), ".bwd."});
    const int recompute_phase = piece({"mb", Digits(mu), ".rec."});
    const auto run = [&](int m) {
      module_compute(Category::Compute, m, true, module_prefix(phase, m), "");
    };
    const Unit& root = units_[0];
    policy().pre_backward(0, phase);
    for (std::size_t k = root.modules.size(); k-- > 1;) run(root.modules[k]);  // head, norm
    for (std::size_t i = units_.size(); i-- > 1;) {
      const Unit& u = units_[i];
      policy().pre_backward(i, phase);
      // Activation checkpointing inside the unit (FSDP1: FSDP(CheckpointWrapper(block)); FSDP2:
      // fully_shard of the checkpointed block): the recompute runs the block's forward with the
      // parameters the pre-backward hook unsharded.
      if (s_.checkpointing)
        for (const int m : u.modules)
          if ((*out_.modules)[static_cast<std::size_t>(m)].recomputed)
            module_compute(Category::Recompute, m, false, module_prefix(recompute_phase, m), "");
      for (std::size_t k = u.modules.size(); k-- > 0;) run(u.modules[k]);
      policy().post_backward(i, phase);
    }
    run(root.modules.front());  // the embedding
    policy().post_backward(0, phase);
    policy().final_callback();
  }

 protected:
  std::vector<Unit> units_;  // the root, then the blocks in forward order
  ShardGroups mesh_;         // the world, or the shard groups and their replicas
};

}  // namespace zerosim::lowering
