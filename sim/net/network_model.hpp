// Network models behind one interface: given a CollectiveOp at the engine's current time, call
// on_done when it completes. "flow": collectives lowered to phases of flows that share links
// max-min fair (flow_network.hpp); "analytic": per phase latency + busiest link's bytes / rate,
// concurrent collectives sharing each link class's rate (analytic_network.hpp).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/nccl_model.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/network_tier.hpp"

namespace zerosim {

class FabricPlans;

struct NetStats {
  double inter_node_bytes = 0;     // payload bytes of flows whose route crosses a node boundary
  double intra_node_bytes = 0;     // payload bytes of flows that stay inside a node
  std::uint64_t flows = 0;         // flows of the full model (after merging; a folded flow counts
                                   // its images in every block, flow_network.hpp)
  std::uint64_t solver_flows = 0;  // flow tier: solver flows after symmetry reduction (<= flows)
  NetStats& operator+=(const NetStats& o) {
    inter_node_bytes += o.inter_node_bytes;
    intra_node_bytes += o.intra_node_bytes;
    flows += o.flows;
    solver_flows += o.solver_flows;
    return *this;
  }
};

class NetworkModel : public Model {
 public:
  virtual const char* name() const = 0;
  // Starts op at the engine's time; on_done runs, as an engine event, when it completes.
  virtual void start(const CollectiveOp& op, Engine::Action on_done) = 0;
  // The same with any callable (tests, one-off timings): the model holds it until it runs.
  void start(const CollectiveOp& op, std::function<void()> on_done) {
    start(op, callbacks_.keep(std::move(on_done)));
  }
  virtual const NetStats& stats() const = 0;

  // A contention-free model (every collective's time independent of what else runs) can cost a
  // collective without the engine: cost() returns its duration and what start() would add to
  // stats(), and adds nothing; account() adds to stats(). Equal ops (kind, algorithm, group list
  // object, bytes) cost the same. run_program then schedules the whole step in one pass
  // (direct_run.cpp). Both throw logic_error unless contention_free().
  virtual bool contention_free() const { return false; }
  virtual std::pair<double, NetStats> cost(const CollectiveOp& op);
  virtual void account(const NetStats& s);

  // The ops a run will start, told before the first (the flow tier folds only when all of them
  // are invariant under the cluster's block rotation, folding.hpp). Optional.
  virtual void expect_ops(std::span<const CollectiveOp> ops) { (void)ops; }
  // A run resumed from a snapshot (step_program.hpp RunSnapshot) replaces the model it left by a
  // fresh one. idle(): no collective is live and nothing but stats() and caches remains of the
  // collectives run, so a fresh model whose stats go on from these (resume_stats, before its
  // first start) runs on exactly as this one would. Models that cannot say so answer false.
  virtual bool idle() const { return false; }
  virtual void resume_stats(const NetStats& s);

  // After expect_ops: a class per op of those ops (StepProgram::collective_class), equal ops
  // sharing one, so that a model keeping per-op results finds an op's by its class. Optional.
  virtual void expect_classes(std::span<const int> op_class, int classes) {
    (void)op_class;
    (void)classes;
  }

 protected:
  CallbackPool callbacks_;  // the callables start() was given, until they run
};

// How a tier computes, apart from what it models: each fast path can be switched off to run the
// plain computation it must equal (the reference modes of tests/net and bench/).
struct NetworkOptions {
  bool flow_symmetry = true;       // flow tier: solve link classes, not every link (equitable.hpp)
  bool flow_folding = true;        // flow tier: block-0 images on rotation-invariant runs (folding)
  bool analytic_shortcuts = true;  // analytic tier: shared per-byte plans (analytic_shortcuts)
  bool operator==(const NetworkOptions&) const = default;
};

// The model of `tier`. Registers itself with the engine.
// plans: the fabric's shared analytic plans (a context's FabricPlanCache) if the caller holds them;
// without, the model plans what it needs itself (the same plans).
std::unique_ptr<NetworkModel> make_network_model(NetworkTier tier, Engine& engine,
                                                 const Topology& topo, const CostProfile& profile,
                                                 std::shared_ptr<FabricPlans> plans = nullptr,
                                                 const NetworkOptions& options = {});

// Time of one collective alone on an idle network (runs a private engine for the flow tier).
double collective_time(NetworkTier tier, const CollectiveOp& op, const Topology& topo,
                       const CostProfile& profile);

// Time per call of a loop of back-to-back calls of op, as nccl-tests measures it with each thread
// driving gpus_per_thread GPUs (its -g): the host issues the next call while the GPUs run this one,
// so a call takes its time on the GPUs (collective_time) or, if longer, the thread's launches for
// its GPUs (gpus_per_thread x nccl.host_launch_s).
double nccl_tests_time(NetworkTier tier, const CollectiveOp& op, const Topology& topo,
                       const CostProfile& profile, int gpus_per_thread);

// NCCL's choice (algorithm, protocol) for op at its size, as both tiers make it; nullopt for
// zerosim's compositions and point-to-point ops (is_nccl_collective).
std::optional<NcclChoice> nccl_choice_for(const CollectiveOp& op, const Topology& topo,
                                          const CostProfile& profile);

}  // namespace zerosim
