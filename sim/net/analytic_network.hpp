// AnalyticNetwork: the "analytic" tier. No contention between collectives: each phase of a lowered
// collective takes latency_s + max over links of (bytes of that phase's flows on the link) /
// (link bandwidth x class efficiency); the collective's time is the sum over its phases and its
// completion is one engine event. Flows of one phase that share a link do contend (their bytes
// add).
//
// Loads are proportional to op.bytes, so one per-byte plan per op shape (kind, algorithm, groups)
// serves every size (analytic_shortcuts.hpp; the rail all-to-all is computed without flows), and
// networks on identical fabrics share those plans (analytic_plan_cache.hpp).
// With full = true (NetworkOptions::analytic_shortcuts = false) every distinct op is lowered with
// its own bytes and every flow routed (cached per op): the reference the shortcuts must match.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/network_model.hpp"
#include "sim/net/op_cache.hpp"

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
  void start(const CollectiveOp& op, std::function<void()> on_done) override;
  const NetStats& stats() const override { return stats_; }
  double next_event_time() const override { return kNever; }  // completions are engine events
  void advance_to(double) override {}
  bool contention_free() const override { return true; }
  std::pair<double, NetStats> cost(const CollectiveOp& op) override { return op_cost(op); }
  void account(const NetStats& s) override { stats_ += s; }

  // Time of one lowered plan; accumulates stats.
  double plan_time(const CollectivePlan& plan);

  // Time and stats of op alone, by the per-shape plans (kept per shape) or, when full, the
  // reference (cached per op).
  std::pair<double, NetStats> op_cost(const CollectiveOp& op);

 private:
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
  struct Cached {
    double time_s;
    NetStats stats;  // what plan_time added
  };
  OpCache<Cached> cache_;                // full mode
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
};

}  // namespace zerosim
