// The analytic tier's per-byte plans (analytic_shortcuts.hpp) of one fabric (FabricPlans), and a
// SimContext's FabricPlanCache of them, shared by every network model on an identical fabric:
// scenarios of a sweep or a planner that differ in model, strategy or batch, but run on the same
// cluster, plan each collective shape once. The key is the whole fabric (vertices, links with
// bandwidths and latencies, GPU numbering) plus the profile's per-link-class hop latency and
// efficiency, compared exactly (a hash only picks the bucket), so a hit returns what unit_plan
// would compute; a fresh FabricPlans per network model is the plain computation it must equal.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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

// The plans of each fabric a context has met. Used by one thread at a time, as its context is.
class FabricPlanCache {
 public:
  // The shared plans of topo's fabric under profile (created empty on first use). At most a few
  // dozen fabrics are kept; older ones are dropped (holders keep theirs).
  std::shared_ptr<FabricPlans> get(const Topology& topo, const CostProfile& profile);

 private:
  static constexpr std::size_t kProfileKeyValues = 15;
  using ProfileKey = std::array<double, kProfileKeyValues>;
  // By a hash of the whole key, each with its key values.
  std::multimap<std::uint64_t, std::pair<std::vector<double>, std::shared_ptr<FabricPlans>>> map_;
  std::size_t key_values_ = 0;
  // The same plans by (Topology::builder_key, the profile's key values): a cluster rebuilt from
  // the same builder parameters is found without hashing and comparing its whole graph.
  std::map<std::pair<std::string, ProfileKey>, std::shared_ptr<FabricPlans>> built_;
  // The last answer by that key: a sweep runs many scenarios on one cluster.
  std::pair<std::string, ProfileKey> last_key_;
  std::shared_ptr<FabricPlans> last_;
};

// Payload bytes (inter-/intra-node) and flow count of op's lowered flows, from the plan of its
// shape: the step's per-collective byte accounting without lowering qgZ's inter-node all-to-all.
// Inter-node = the flow's route leaves the source node, as in NetStats; this equals node_of(src) !=
// node_of(dst) unless an explicit graph routes a pair of one node through the fabric. Callers with
// many ops keep a FabricPlans and call stats().
NetStats collective_stats(const CollectiveOp& op, const Topology& topo, const CostProfile& profile);

}  // namespace zerosim
