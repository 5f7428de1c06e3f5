// A Scenario resolved: its cluster's shape (known before any graph is built), cost profile, model
// at its sequence length, strategy with the flags that refine it, batch and attention, each
// checked in that order (InputError naming the flag or the JSON path); the cluster's graph is built
// last, once every cheaper check has passed, so that a refused scenario costs no topology.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/memory/memory.hpp"
#include "sim/step/lower.hpp"
#include "sim/step/sim_context.hpp"
#include "sim/step/simulate.hpp"
#include "sim/topology/cluster_shape.hpp"

namespace zerosim {

// A scenario resolved: its cluster and profile (shared with the context's caches), the setup that
// lowering reads, and what the warnings say of it.
struct Resolved {
  ClusterShape shape;                    // known before the cluster is built
  std::shared_ptr<const Topology> topo;  // built once every cheaper check has passed
  std::shared_ptr<const CostProfile> prof;
  StepSetup setup;
  std::vector<std::string> filled;  // what a DeepSpeed config left "auto", filled
  // What ZeRO-Offload puts on the host and the drives per GPU, and a node's host memory
  // (resolve_offload; offloading strategies only).
  OffloadFootprint footprint;
  double host_capacity_bytes = 0;
};

// The scenario resolved and validated. labels: the lowering names its ops (for a trace). build:
// the cluster's graph is built (after every check, and after the refusal of what no node count
// fits when the context's refuse_unfit_early is on); without, only its shape is known.
Resolved resolve(const Scenario& sc, SimContext& context, bool labels, bool build = true);

// The memory estimate's inputs that the resolved scenario decides, on `world` GPUs: the model,
// strategy, batch, attention, the GPU's capacity and reserve; what the lowered schedule decides
// (prefetch, buckets, held weights) is left at its defaults for the caller.
MemoryInputs memory_inputs(const Resolved& r, ModuleCache& modules, int world);

// The refusal, naming the flag that can fix it, of a resolved scenario that no node count can make
// fit; nullopt when some node count may fit it.
std::optional<UnfitRefusal> unfit_refusal(const Resolved& r, ModuleCache& modules);

}  // namespace zerosim
