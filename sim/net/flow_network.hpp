// FlowNetwork: the "flow" tier. Each collective is lowered to phases of flows; a phase waits its
// latency, then starts its flows on their routes. Every link's capacity is its bandwidth times the
// profile's efficiency for its class, and the rates of ALL active flows (of every collective) are
// max-min fair (FairShare), recomputed only in the components whose flow set changed. A flow's
// completion time is computed exactly from remaining bytes / rate; completions within a relative
// 1e-9 of each other are handled as one event. The collective completes when its last phase does.
//
// Speed: a step repeats the same few collectives every layer, so start() caches each distinct op's
// lowered plan with its routes already resolved (link lists in one pool). Within a phase, flows
// with the same link list and the same bytes start together and always get the same max-min rate,
// so they are one solver flow of weight w (exact up to rounding; test_flow_speed compares with the
// unmerged simulation).
//
// Symmetry (equitable.hpp): the solver does not see real links and flows but link classes and flow
// classes of an equitable partition refined on the actual routes, so the N images of a collective's
// traffic on N identical nodes are one solver flow of weight N. When a phase needs a finer link
// partition, the flows in flight are re-expressed in it (their members' remaining bytes are equal).
// Folding (folding.hpp) comes first: on a cluster with a block rotation, when every op of the run
// is invariant under it, plans hold only block 0's flows, on the block-0 images of their links.
// set_symmetry(false) (NetworkOptions::flow_symmetry) simulates every merged flow on every real
// link, without folding; set_folding(false) (NetworkOptions::flow_folding) turns off folding only.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/equitable.hpp"
#include "sim/net/fair_share.hpp"
#include "sim/net/network_model.hpp"
#include "sim/net/op_cache.hpp"

namespace zerosim {

class FlowNetwork : public NetworkModel {
 public:
  // Does not register itself; make_network_model does.
  FlowNetwork(Engine& engine, const Topology& topo, const CostProfile& profile);

  const char* name() const override { return "flow"; }
  using NetworkModel::start;
  void start(const CollectiveOp& op, Engine::Action on_done) override;
  const NetStats& stats() const override { return stats_; }
  double next_event_time() const override;
  void advance_to(double t) override;

  // Starts one already-lowered plan (used by start() and by tests that build plans by hand).
  void start_plan(const CollectivePlan& plan, Engine::Action on_done);
  void start_plan(const CollectivePlan& plan, std::function<void()> on_done) {
    start_plan(plan, callbacks_.keep(std::move(on_done)));
  }
  // Flows currently in the solver (after aggregation).
  std::size_t active_flows() const { return solver_.active_flows(); }
  // Rate of the solver flows of the last started phase (tests); valid after next_event_time().
  const FairShare& solver() const { return solver_; }
  // false: no plan cache and no merging of identical flows (the reference for tests).
  void set_shortcuts(bool on) { shortcuts_ = on; }
  // false: no symmetry reduction (NetworkOptions::flow_symmetry). Call before the first start.
  void set_symmetry(bool on) { symmetry_ = on; }
  bool symmetry() const { return shortcuts_ && symmetry_; }
  // false: no folding (tests' reference). Call before the first start.
  void set_folding(bool on) { folding_allowed_ = on; }
  // The fabric's shared analytic plans (FabricPlanCache), for the all-reduces priced from them;
  // without, the network plans them itself.
  void set_fabric_plans(std::shared_ptr<FabricPlans> plans) { fabric_ = std::move(plans); }
  // Blocks folded into one: 1 no folding, 0 not decided yet (expect_ops decides; without it, the
  // first start decides for no folding).
  int fold_blocks() const { return fold_blocks_; }
  // Folds when every op is rotation-invariant; an op that is not, started while folding, is a
  // logic_error (the caller told of other ops).
  void expect_ops(std::span<const CollectiveOp> ops) override;
  // Leaves symmetry mode for the rest of the run: the flows in flight move to the real links.
  // Called automatically when a phase of at least `min_flows` merged flows keeps more than
  // `max_ratio` of them as classes (the quotient then costs more than it saves: its link classes
  // join components that the full problem solves separately). Public for tests.
  void leave_symmetry();
  void set_symmetry_fallback(std::size_t min_flows, double max_ratio) {
    fallback_min_flows_ = min_flows;
    fallback_max_ratio_ = max_ratio;
  }
  // start() refuses an op with more flows in one phase (InputError naming --tier).
  static constexpr std::uint64_t kMaxPhaseFlows = std::uint64_t{1} << 25;
  // Distinct collectives lowered so far (plan cache entries).
  std::size_t cached_plans() const { return cache_.size(); }

  // A plan with routes resolved: solver flows of weight w, links in one pool.
  using ResolvedFlow = PlanFlow;
  struct ResolvedPhase {
    double latency_s = 0;
    double wire = 1;  // Phase::wire
    std::vector<ResolvedFlow> flows;
    double inter_node_bytes = 0, intra_node_bytes = 0;  // of all flows, for the stats
    std::uint64_t full_flows = 0;  // flows of the unfolded plan: a folded flow counts its images
    // Merged flows as the lowering listed them, a flow of k images (Flow::images) counting k: what
    // the symmetry fallback weighs the classes against, as if each image were its own flow.
    std::uint64_t listed_flows = 0;
    mutable QuotientPhase quotient;  // under this network's link partition (symmetry mode)
  };
  struct ResolvedPlan {
    std::vector<ResolvedPhase> phases;
    std::vector<std::int32_t> links;
  };

 private:
  // lower_collective, after refusing an op with more than kMaxPhaseFlows flows in a phase; with
  // fold, block 0's flows only.
  CollectivePlan lower(const CollectiveOp& op, bool fold = false,
                       TrafficPattern pattern = TrafficPattern::Ring) const;
  // fold: the plan holds block 0's flows of a folded op; its links go to their block-0 images and
  // its byte counts stand for all blocks.
  std::shared_ptr<const ResolvedPlan> resolve_plan(const CollectivePlan& plan,
                                                   bool fold = false) const;
  bool invariant(const CollectiveOp& op);
  void decide_folding(bool all_invariant);
  // scale: bytes of the op per byte of the plan (plans cached per shape are per byte).
  // scale: the op's bytes per byte of plan; wire: time factor of NCCL's choice on the flows'
  // bytes (stats count payload); latency_s: NCCL's latency of the choice, before phase 0.
  void start_resolved(std::shared_ptr<const ResolvedPlan> plan, Engine::Action on_done,
                      double scale = 1, double wire = 1, double latency_s = 0);
  // NCCL's own collectives: the choice (nccl_model.hpp) over the patterns' idle-network times.
  void start_nccl(const CollectiveOp& op, Engine::Action on_done);
  // The resolved plan of unit's traffic pattern, cached per shape.
  std::shared_ptr<const ResolvedPlan> pattern_plan(const CollectiveOp& unit, TrafficPattern pattern,
                                                   bool fold);
  // Idle-network seconds per byte of a resolved unit plan's busiest link: over all links, and over
  // network links only (summed over its phases).
  std::pair<double, double> busiest_per_byte(const ResolvedPlan& plan) const;

  struct Coll {
    std::shared_ptr<const ResolvedPlan> plan;
    double scale = 1;  // the op's bytes per byte of plan
    double wire = 1;   // flow bytes per payload byte (NCCL's protocol and algorithm factors)
    std::size_t phase = 0;
    std::int64_t outstanding = 0;          // solver flows of the current phase still running
    bool in_solver = false;                // the current phase's flows are in the solver
    std::vector<FairShare::FlowId> flows;  // solver flows of the current phase (symmetry mode)
    Engine::Action on_done;
  };
  struct Done {
    double time;
    FairShare::FlowId flow;
    std::uint64_t version;
  };
  struct DoneLater {
    bool operator()(const Done& a, const Done& b) const {
      return a.time != b.time ? a.time > b.time : a.flow > b.flow;
    }
  };

  void begin_phase(std::size_t coll);
  void finish_phase(int coll);
  void resolve() const;  // re-solve rates of changed components, settle, reschedule
  void init_links();
  FairShare::FlowId add_solver_flow(std::span<const std::int32_t> links, double weight,
                                    double remaining, int coll);
  // Symmetry mode: refines the link partition until coll c's next phase and every phase in flight
  // are equitable; re-expresses the flows in flight in the refined partition.
  void sync_partition(int c);
  // Symmetry mode: removes coll k's solver flows; returns their members' remaining bytes per class
  // (-1: class finished).
  std::vector<double> take_out(int k);
  static bool refresh(LinkPartition& part, const ResolvedPlan& plan, const ResolvedPhase& ph,
                      std::size_t max_classes = SIZE_MAX);
  // Per coll in flight (symmetry mode, taken out of the solver): its flows' classes and their
  // members' remaining bytes per class (< 0: finished).
  struct Snapshot {
    int coll = -1;
    std::vector<std::int32_t> class_of;
    std::vector<double> remaining;
  };
  std::vector<Snapshot> take_out_all();
  // Leaves symmetry mode: a solver on the real links, the snapshots' flows re-added member by
  // member.
  void to_full(const std::vector<Snapshot>& snap);

  Engine& engine_;
  const Topology& topo_;
  const CostProfile& profile_;
  NetStats stats_;
  mutable FairShare solver_;
  std::vector<Coll> colls_;
  std::vector<int> free_colls_;

  // Per solver flow id (structure of arrays).
  mutable std::vector<double> remaining_, settled_at_, rate_;
  mutable std::vector<std::uint64_t> version_;
  std::vector<std::int32_t> coll_of_;
  mutable std::vector<Done> done_heap_;
  mutable bool dirty_ = false;
  std::vector<FairShare::FlowId> finished_;  // scratch of advance_to
  bool shortcuts_ = true;
  bool symmetry_ = true;
  bool links_ready_ = false;
  bool folding_allowed_ = true;
  int fold_blocks_ = 0;                                     // 0: not decided yet
  std::vector<std::pair<GroupList, bool>> invariant_memo_;  // per group list (by address)
  std::unique_ptr<LinkPartition> part_;
  std::size_t fallback_min_flows_ = 1000;
  double fallback_max_ratio_ = 0.5;
  OpCache<std::shared_ptr<const ResolvedPlan>> cache_;
  OpCache<std::shared_ptr<const ResolvedPlan>> nvls_cache_;  // NVLS pattern plans
  // Idle-network per-byte times of NCCL's patterns per op shape, for the choice.
  OpCache<UnitPlan> unit_plans_;
  std::shared_ptr<FabricPlans> fabric_;
  // Symmetry mode: the last phases synced (plan, phase index), refined along with a new phase when
  // it makes them stale.
  static constexpr std::size_t kRecentPhases = 8;
  std::vector<std::pair<std::shared_ptr<const ResolvedPlan>, std::size_t>> recent_;
};

}  // namespace zerosim
