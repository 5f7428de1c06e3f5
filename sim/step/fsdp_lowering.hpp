// The step both FSDP lowerings build (FSDP1 lower_fsdp.cpp, FSDP2 lower_fsdp2.cpp): the units
// (fsdp_units), each micro-step's forward then backward as the lowering's policy runs them, then
// Adam on each rank's shard of every parameter (both shard the optimizer states over the mesh's
// shard groups). What differs between the two is the policy: the derived class's forward(mu),
// backward(mu), its streams and the ops it reserves per module and unit. Private to the step
// module.
#pragma once
#include <cstddef>
#include <vector>

#include "sim/step/fsdp_units.hpp"
#include "sim/step/program_builder.hpp"

namespace zerosim::lowering {

// Policy (CRTP): forward(int mu) and backward(int mu), reachable from this class, and
// kOpsPerUnit / kPrefixesPerUnit, the ops and labels one unit adds per micro-step at most. The
// derived constructor opens its streams and sets mesh_.
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
    auto& policy = static_cast<Policy&>(*this);
    for (int mu = 0; mu < s_.grad_accum; ++mu) {
      policy.forward(mu);
      policy.backward(mu);
    }
    // Adam on the local shard of every parameter (FSDP's sharded FlatParameter, FSDP2's DTensor
    // shards).
    gpu_optimizer(static_cast<double>(total_params()) / mesh_.size, prefix(piece({"optimizer"})));
  }

 protected:
  using ProgramBuilder::ProgramBuilder;

  std::vector<Unit> units_;  // the root, then the blocks in forward order
  ShardGroups mesh_;         // the world, or the shard groups and their replicas
};

}  // namespace zerosim::lowering
