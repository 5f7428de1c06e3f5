// The fabric registry and per-fabric plan lookup.
#include "sim/net/analytic_plan_cache.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace zerosim {

namespace {

// Everything a plan depends on, as numbers (all integers involved are exact in a double).
std::vector<double> fabric_key(const Topology& t, const CostProfile& p) {
  std::vector<double> k;
  k.reserve(4 + 3 * static_cast<std::size_t>(t.vertex_count()) + 5 * t.links().size() +
            static_cast<std::size_t>(t.gpu_count()) + 9);
  k.push_back(t.gpus_per_node());
  k.push_back(t.vertex_count());
  k.push_back(t.link_count());
  k.push_back(t.gpu_count());
  for (int v = 0; v < t.vertex_count(); ++v) {
    const VertexInfo& x = t.vertex(v);
    k.insert(k.end(), {static_cast<double>(x.kind), double(x.node), double(x.local)});
  }
  for (const LinkInfo& l : t.links())
    k.insert(k.end(), {double(l.from), double(l.to), l.bandwidth_Bps, l.latency_s,
                       static_cast<double>(l.cls)});
  for (int g = 0; g < t.gpu_count(); ++g) k.push_back(t.gpu_vertex(g));
  for (LinkClass c : {LinkClass::NvLink, LinkClass::Pcie, LinkClass::Network}) {
    const auto it = p.link_classes.find(c);
    k.push_back(it != p.link_classes.end());
    k.push_back(it != p.link_classes.end() ? it->second.hop_latency_s : 0);
    k.push_back(it != p.link_classes.end() ? it->second.efficiency : 0);
  }
  return k;
}

std::uint64_t hash_of(const std::vector<double>& k) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the values' bit patterns
  for (double x : k) h = (h ^ std::bit_cast<std::uint64_t>(x)) * 1099511628211ULL;
  return h;
}

struct Registry {
  std::mutex mu;
  std::multimap<std::uint64_t, std::pair<std::vector<double>, std::shared_ptr<FabricPlans>>> map;
};

constexpr std::size_t kMaxFabrics = 64;

}  // namespace

UnitPlan FabricPlans::get(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                          const std::vector<double>* capacity) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [groups, plan] : shapes_[{op.kind, op.algorithm}])
      if (groups == op.groups) return plan;
  }
  // Outside the lock: may take a while.
  UnitPlan plan = capacity ? unit_plan(op, topo, profile, *capacity)
                           : unit_plan(op, topo, profile, link_capacities(topo, profile));
  std::lock_guard lock(mu_);
  shapes_[{op.kind, op.algorithm}].emplace_back(op.groups, plan);
  return plan;
}

NetStats FabricPlans::stats(const CollectiveOp& op, const Topology& topo,
                            const CostProfile& profile) {
  if (!(op.bytes > 0) || !std::isfinite(op.bytes)) lower_collective(op, topo, profile);  // throws
  return get(op, topo, profile).stats(op.bytes);
}

std::shared_ptr<FabricPlans> fabric_plans(const Topology& topo, const CostProfile& profile) {
  static Registry reg;
  std::vector<double> key = fabric_key(topo, profile);
  const std::uint64_t h = hash_of(key);
  std::lock_guard lock(reg.mu);
  for (auto [it, end] = reg.map.equal_range(h); it != end; ++it)
    if (it->second.first == key) return it->second.second;
  if (reg.map.size() >= kMaxFabrics) reg.map.clear();
  auto plans = std::make_shared<FabricPlans>();
  reg.map.emplace(h, std::pair{std::move(key), plans});
  return plans;
}

NetStats collective_stats(const CollectiveOp& op, const Topology& topo,
                          const CostProfile& profile) {
  return fabric_plans(topo, profile)->stats(op, topo, profile);
}

}  // namespace zerosim
