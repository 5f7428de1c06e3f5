// The analytic tier's per-byte plans (analytic_shortcuts.hpp) of one fabric (FabricPlans), and a
// SimContext's FabricPlanCache of them, shared by every network model on an identical fabric:
// scenarios of a sweep or a planner that differ in model, strategy or batch, but run on the same
// cluster, plan each collective shape once. The key is the whole fabric (vertices, links with
// bandwidths and latencies, GPU numbering, NIC path) plus the profile's per-link-class hop latency
// and efficiency, compared exactly (a hash only picks the bucket), so a hit returns what unit_plan
// would compute; a fresh FabricPlans per network model is the plain computation it must equal.
//
// Two levels below and above the plans:
// - FabricLoads: the lowering and routing of each shape (LinkLoads), which do not depend on link
//   rates, shared by the FabricPlans of every fabric that differs only in link bandwidths with the
//   same capacity groups (links of equal bandwidth and class) and in class efficiencies (a sweep's
//   NIC rates): a plan on a new rate is a pass over a handful of loads per phase
//   (unit_plan(LinkLoads, capacities)), not a lowering and routing again.
// - DemandCache (analytic_demand.hpp): each op's demand on the fabric, per cost profile.
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

#include "sim/net/analytic_demand.hpp"
#include "sim/net/analytic_shortcuts.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim {

// The rate-independent loads of each op shape (kind, algorithm, groups) on one fabric's graph.
class FabricLoads {
 public:
  // link_loads(op, topo, profile), computed on a miss. Stays valid while this object lives.
  const LinkLoads& get(const CollectiveOp& op, const Topology& topo, const CostProfile& profile);

 private:
  std::once_flag groups_once_;
  std::vector<int> groups_;  // capacity_groups of the graph (a function of the key)
  std::mutex mu_;
  std::map<std::pair<CollKind, Algorithm>,
           std::vector<std::pair<GroupList, std::unique_ptr<const LinkLoads>>>>
      shapes_;
};

class FabricPlans {
 public:
  // loads: the graph's shared loads (FabricPlanCache), else this object's own.
  explicit FabricPlans(std::shared_ptr<FabricLoads> loads = nullptr);
  // The plan of op's shape (kind, algorithm, groups), on a miss the rate application of its loads
  // (with capacity, or capacities(topo, profile) when null). topo and profile must be the
  // fabric's.
  UnitPlan get(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
               const std::vector<double>* capacity = nullptr);
  // Payload bytes (inter-/intra-node) and flow count of op's lowered flows, from its plan.
  NetStats stats(const CollectiveOp& op, const Topology& topo, const CostProfile& profile);
  // link_capacities(topo, profile), computed once per fabric (a pure function of the key).
  const std::vector<double>& capacities(const Topology& topo, const CostProfile& profile);
  // The demands of ops on this fabric under profile (compared by value; the plans' key holds only
  // part of it). A few profiles are kept, each cache up to kMaxDemands demands: a full one is
  // replaced by a fresh one for the next caller (its holders keep theirs).
  std::shared_ptr<DemandCache> demands(const CostProfile& profile);
  const std::shared_ptr<FabricLoads>& loads() const { return loads_; }

  static constexpr std::size_t kMaxDemands = 1024;

 private:
  static constexpr std::size_t kMaxProfiles = 4;
  std::shared_ptr<FabricLoads> loads_;
  std::once_flag capacities_once_;
  std::vector<double> capacities_;
  std::mutex mu_;
  std::map<std::pair<CollKind, Algorithm>, std::vector<std::pair<GroupList, UnitPlan>>> shapes_;
  std::vector<std::pair<CostProfile, std::shared_ptr<DemandCache>>> demands_;  // oldest first
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
  // By a hash of the key without link bandwidths and class efficiencies (the loads' key): each
  // graph's key values, its loads, and its plans per rate key (the bandwidths and efficiencies).
  struct Graph {
    std::vector<double> key;
    std::shared_ptr<FabricLoads> loads;
    std::vector<std::pair<std::vector<double>, std::shared_ptr<FabricPlans>>> plans;
  };
  std::multimap<std::uint64_t, Graph> graphs_;
  std::size_t key_values_ = 0;  // in graphs_
  std::size_t plans_ = 0;       // in graphs_
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
