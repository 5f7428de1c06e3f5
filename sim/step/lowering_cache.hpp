// shared_lowered_step: lower_step memoized per thread for scenarios that differ only in their
// tokens per micro-step. A batch-size sweep lowers the same program (streams, events, collectives,
// labels) again and again; only the module compute ops' durations follow the tokens, and a
// network sweep does not change the program at all (collectives are costed when run). The last few
// lowered steps are kept, keyed by everything lower_step reads but the tokens (of the cluster its
// rank layout; the profile by identity: the profile memo hands out the same object while its file
// is unchanged); a hit is re-timed in place (retime_lowered_step), which gives bit for bit what a
// fresh lowering gives. ZEROSIM_NO_LOWERING_REUSE=1 lowers every scenario afresh.
#pragma once
#include <memory>

#include "sim/profile/cost_profile.hpp"
#include "sim/step/lower.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

// The lowered step of `setup`. The result stays valid and unchanged until the calling thread's
// next call (a later hit may re-time it in place only when no caller holds it any more).
// Turns the reuse off (or back on) for the whole process, on top of ZEROSIM_NO_LOWERING_REUSE:
// benchmarks that time one scenario over and over measure the whole step with it off.
void set_lowering_reuse(bool on);

std::shared_ptr<const LoweredStep> shared_lowered_step(const StepSetup& setup, const Topology& topo,
                                                       std::shared_ptr<const CostProfile> profile);

}  // namespace zerosim
