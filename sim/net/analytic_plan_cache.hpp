// Process-wide cache of the analytic tier's per-byte plans (analytic_shortcuts.hpp), shared by
// every AnalyticNetwork on an identical fabric: scenarios of a sweep or a planner that differ in
// model, strategy or batch, but run on the same cluster, plan each collective shape once. The key
// is the whole fabric (vertices, links with bandwidths and latencies, GPU numbering) plus the
// profile's per-link-class hop latency and efficiency, compared exactly (a hash only picks the
// bucket), so a hit returns what unit_plan would compute. Thread-safe (sweeps run scenarios on all
// cores).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "sim/net/analytic_shortcuts.hpp"

namespace zerosim {

class FabricPlans {
 public:
  // The plan of op's shape (kind, algorithm, groups), computed with unit_plan on a miss (with
  // capacity, or link_capacities(topo, profile) when null). topo and profile must be the fabric's.
  UnitPlan get(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
               const std::vector<double>* capacity = nullptr);
  // Payload bytes (inter-/intra-node) and flow count of op's lowered flows, from its plan.
  NetStats stats(const CollectiveOp& op, const Topology& topo, const CostProfile& profile);
  // link_capacities(topo, profile), computed once per fabric (a pure function of the key).
  const std::vector<double>& capacities(const Topology& topo, const CostProfile& profile);

 private:
  std::once_flag capacities_once_;
  std::vector<double> capacities_;
  std::mutex mu_;
  std::map<std::pair<CollKind, Algorithm>, std::vector<std::pair<GroupList, UnitPlan>>> shapes_;
};

// The shared plans of topo's fabric under profile (created empty on first use). At most a few
// dozen fabrics are kept; older ones are dropped from the registry (holders keep theirs).
std::shared_ptr<FabricPlans> fabric_plans(const Topology& topo, const CostProfile& profile);
// The same for a shared topology, remembering this thread's last answer with the topology object
// it was for: a sweep runs many scenarios on one cluster, and a repeat (the same live object, equal
// link-class costs in the profile) skips hashing the fabric.
std::shared_ptr<FabricPlans> fabric_plans(const std::shared_ptr<const Topology>& topo,
                                          const CostProfile& profile);

// Payload bytes (inter-/intra-node) and flow count of op's lowered flows, from the shared plan of
// its shape: the step's per-collective byte accounting without lowering qgZ's inter-node
// all-to-all. Inter-node = the flow's route leaves the source node, as in NetStats; this equals
// node_of(src) != node_of(dst) unless an explicit graph routes a pair of one node through the
// fabric. Each call looks the fabric up (O(links)); callers with many ops keep fabric_plans(...)
// and call stats().
NetStats collective_stats(const CollectiveOp& op, const Topology& topo, const CostProfile& profile);

}  // namespace zerosim
