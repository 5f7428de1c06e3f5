// AnalyticNetwork: the "analytic" tier. A collective alone: each phase of its lowering takes
// latency_s + max over links of (bytes of that phase's flows on the link) / (link bandwidth x
// class efficiency); its time is the sum over its phases (NCCL's collectives: NCCL's choice over
// the patterns, nccl_model.hpp). Flows of one phase that share a link contend (their bytes add).
//
// Collectives that run at the same time share links, in closed form per link class: a phase's
// demand is, per class (NVLink, PCIe, network), the seconds its busiest link of that class needs
// at full capacity (UnitPlan::class_s_per_byte x bytes). While k transfers have work left on a
// class, each advances on it at 1/k of the class's rate (processor sharing: the flow tier's
// max-min fair share when every flow on the link is limited by it and the collectives' flows on it
// are equally many); a phase ends when its work on every class is done. Completions are found
// event by event over the live collectives (a handful), never per flow. Assumed: concurrent
// collectives' busiest links of a class are the same links (symmetric groups over the same
// GPUs/NICs, as a data-parallel step's are).
//
// Loads are proportional to op.bytes, so one per-byte plan per op shape (kind, algorithm, groups)
// serves every size (analytic_shortcuts.hpp; the rail all-to-all is computed without flows), and
// networks on identical fabrics share those plans and the ops' demands (analytic_plan_cache.hpp,
// analytic_demand.hpp).
// With full = true (NetworkOptions::analytic_shortcuts = false) every distinct op is lowered with
// its own bytes and every flow routed (cached per op): the reference the shortcuts must match.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "sim/net/analytic_demand.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/analytic_shortcuts.hpp"
#include "sim/net/network_model.hpp"

namespace zerosim {

class AnalyticNetwork : public NetworkModel {
 public:
  // With the shared per-byte plans (the fast path).
  AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile);
  // full: the reference computation (NetworkOptions::analytic_shortcuts off).
  // plans: the fabric's shared plans when the caller has them already (else looked up here).
  AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile, bool full,
                  std::shared_ptr<FabricPlans> plans = nullptr);

  const char* name() const override { return "analytic"; }
  using NetworkModel::start;
  void start(const CollectiveOp& op, Engine::Action on_done) override;
  const NetStats& stats() const override { return stats_; }
  double next_event_time() const override;
  void advance_to(double t) override;
  void expect_ops(std::span<const CollectiveOp> ops) override;
  // A start() of one of expect_ops' ops (the same object) finds its demand in its class's slot
  // when the slot was filled for an op with the same kind, algorithms, bytes and group list
  // object (what the demand is a function of), without the per-op cache's search.
  void expect_classes(std::span<const int> op_class, int classes) override;
  // Idle: every job ended. What an ended job leaves (a free slot, the time of the last settle) does
  // not change what later jobs do.
  bool idle() const override { return free_jobs_.size() == jobs_.size(); }
  void resume_stats(const NetStats& s) override { stats_ = s; }

  // Time of one lowered plan; accumulates stats.
  double plan_time(const CollectivePlan& plan);

  // Time and stats of op alone, by the per-shape plans (kept per shape) or, when full, the
  // reference (cached per op).
  std::pair<double, NetStats> op_cost(const CollectiveOp& op);

  using Segment = AnalyticSegment;
  using Demand = AnalyticDemand;
  // Cached per op (kind, algorithms, bytes, groups): with the shared plans in the fabric's cache
  // for the network's profile (FabricPlans::demands), which outlives the network; in full mode for
  // the network's life.
  const Demand& op_demand(const CollectiveOp& op);

 private:
  const Demand& cached_demand(const CollectiveOp& op);  // op_demand by the per-op cache
  const UnitPlan& shape_plan(const CollectiveOp& op);
  // The segments of a per-byte plan at bytes; alone_s: the op's time alone (NCCL's choice).
  static void plan_segments(const UnitPlan& plan, const CollectiveOp& op,
                            const CostProfile& profile, double extra_latency_s, Demand& d);
  void begin_transfer(std::size_t job);
  void settle(double t);  // work done since last_ at the current shares
  void end_segment(int job);

  Engine& engine_;
  const Topology& topo_;
  const CostProfile& profile_;
  bool full_;
  NetStats stats_;
  const std::vector<double>* capacity_ = nullptr;  // effective bytes/s per link
  std::vector<double> own_capacity_;               // full mode: no shared plans
  std::vector<double> load_;  // bytes per link in the current phase (scratch, kept zeroed; sized on
                              // first use)
  std::vector<std::int32_t> touched_;
  std::vector<Segment>* segments_out_ = nullptr;  // plan_time's phases, when asked for
  std::shared_ptr<DemandCache> demands_;          // per op
  // expect_ops' ops, their classes, and per class the demand last found with what it was found
  // for.
  struct ClassSlot {
    const Demand* demand = nullptr;
    CollKind kind{};
    Algorithm algorithm{};
    NcclAlgo nccl_algo{};
    NcclProto nccl_proto{};
    double bytes = 0;
    const void* groups = nullptr;
  };
  std::span<const CollectiveOp> expected_ops_;
  std::span<const int> op_class_;
  std::vector<ClassSlot> class_slots_;
  std::shared_ptr<FabricPlans> shared_;  // not full mode
  // This network's own copies of the plans it used, one per shape (kind, algorithm, groups): no
  // lock per start.
  struct Shape {
    CollKind kind;
    Algorithm algorithm;
    GroupList groups;
    UnitPlan plan;
  };
  std::vector<Shape> shapes_;

  // Live collectives (slots reused).
  struct Job {
    const std::vector<Segment>* segments = nullptr;  // the op's cached demand
    std::size_t seg = 0;
    bool transferring = false;
    ClassLoads left{};                    // work left per class in the current segment
    std::array<bool, kLinkClasses> on{};  // classes with work left (sharing the class's rate)
    Engine::Action on_done;
  };
  std::vector<Job> jobs_;
  std::vector<int> free_jobs_;
  std::vector<int> transferring_;            // jobs in a transfer, in the order they began it
  std::array<int, kLinkClasses> sharers_{};  // transfers with work left per class
  double last_ = 0;                          // when left was last brought up to date
  std::vector<int> ended_;                   // advance_to's scratch: transfers ending now
  // next_event_time's answer while the transfers' state is unchanged.
  mutable double next_ = kNever;
  mutable bool next_known_ = false;
};

}  // namespace zerosim
