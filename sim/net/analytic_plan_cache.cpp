// FabricPlans and FabricPlanCache: see analytic_plan_cache.hpp.
#include "sim/net/analytic_plan_cache.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace zerosim {

namespace {

// Everything a plan depends on, as numbers (all integers involved are exact in a double), passed
// to f one by one: hashing and comparing need no copy of a large fabric. The graph's key (what the
// loads depend on, FabricLoads) has each link's capacity group (capacity_groups) in its
// bandwidth's place; the rate key adds the bandwidths and the class efficiencies.
// The profile's part of the graph's key.
template <class F>
void visit_profile_key(const CostProfile& p, F&& f) {
  for (LinkClass c : {LinkClass::NvLink, LinkClass::Pcie, LinkClass::Network}) {
    const auto it = p.link_classes.find(c);
    const bool has = it != p.link_classes.end();
    f(has);
    f(has ? it->second.hop_latency_s : 0);
  }
  // What the compositions' stage latencies and the NVLS patterns read (nccl_model.hpp); the rest
  // of NCCL's choice is made per op from the profile, outside the plans.
  f(p.nccl.version_code);
  f(p.nccl.launch_s);
  f(p.nccl.p2p_peer_s);
  f(p.nccl.p2p_net_peer_s);
  f(p.nccl.nvls);
  f(p.nccl.p2p_efficiency);
}
// The profile's part of the rate key.
template <class F>
void visit_profile_rates(const CostProfile& p, F&& f) {
  for (LinkClass c : {LinkClass::NvLink, LinkClass::Pcie, LinkClass::Network}) {
    const auto it = p.link_classes.find(c);
    f(it != p.link_classes.end() ? it->second.efficiency : 0);
  }
}
constexpr std::size_t kGraphProfileValues = 12, kRateProfileValues = 3;  // the values they pass

template <class F>
void visit_key(const Topology& t, const CostProfile& p, F&& f) {
  const std::vector<int> groups = capacity_groups(t);
  f(t.gpus_per_node());
  f(t.vertex_count());
  f(t.link_count());
  f(t.gpu_count());
  f(static_cast<double>(t.nic_path()));  // the plans' NCCL shape (comm_shape's type_inter)
  f(t.pxn());
  for (int v = 0; v < t.vertex_count(); ++v) {
    const VertexInfo& x = t.vertex(v);
    f(static_cast<double>(x.kind));
    f(x.node);
    f(x.local);
  }
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    const LinkInfo& l = t.links()[i];
    f(l.from);
    f(l.to);
    f(groups[i]);
    f(l.latency_s);
    f(static_cast<double>(l.cls));
  }
  for (int g = 0; g < t.gpu_count(); ++g) f(t.gpu_vertex(g));
  visit_profile_key(p, f);
}

template <class F>
void visit_rates(const Topology& t, const CostProfile& p, F&& f) {
  for (const LinkInfo& l : t.links()) f(l.bandwidth_Bps);
  visit_profile_rates(p, f);
}

std::uint64_t key_hash(const Topology& t, const CostProfile& p) {
  // FNV-1a over the values' bit patterns, in four interleaved streams: one chain of multiplies
  // was the latency of a whole fabric's values (a scenario on a new cluster hashes its fabric).
  constexpr std::uint64_t kBasis = 1469598103934665603ULL, kPrime = 1099511628211ULL;
  std::array<std::uint64_t, 4> h{kBasis, kBasis + 1, kBasis + 2, kBasis + 3};
  std::size_t i = 0;
  visit_key(t, p, [&](double x) {
    std::uint64_t& s = h[i++ & 3];
    s = (s ^ std::bit_cast<std::uint64_t>(x)) * kPrime;
  });
  std::uint64_t out = kBasis;
  for (std::uint64_t s : h) out = (out ^ s) * kPrime;
  return out;
}

// The number of values visit_key and visit_rates pass.
std::size_t key_size(const Topology& t) {
  return 6 + 3 * static_cast<std::size_t>(t.vertex_count()) + 5 * t.links().size() +
         static_cast<std::size_t>(t.gpu_count()) + kGraphProfileValues;
}
std::size_t rates_size(const Topology& t) { return t.links().size() + kRateProfileValues; }

// Equal bit patterns, value by value (stricter than ==, which is what a cache key needs), without
// a branch per value: a new cluster compares its whole fabric with each candidate.
template <class Visit>
bool equals(const std::vector<double>& k, std::size_t size, Visit&& visit) {
  if (k.size() != size) return false;
  std::size_t i = 0;
  std::uint64_t diff = 0;
  visit([&](double x) {
    diff |= std::bit_cast<std::uint64_t>(k[i++]) ^ std::bit_cast<std::uint64_t>(x);
  });
  return diff == 0;
}
bool key_equals(const std::vector<double>& k, const Topology& t, const CostProfile& p) {
  return equals(k, key_size(t), [&](auto&& f) { visit_key(t, p, f); });
}
bool rates_equal(const std::vector<double>& k, const Topology& t, const CostProfile& p) {
  return equals(k, rates_size(t), [&](auto&& f) { visit_rates(t, p, f); });
}

template <class Visit>
std::vector<double> values_of(std::size_t size, Visit&& visit) {
  std::vector<double> k;
  k.reserve(size);
  visit([&](double x) { k.push_back(x); });
  return k;
}

// Bounds on what a cache keeps: fabrics (plans), and key values (a 32768-GPU fabric's key is ~2M).
constexpr std::size_t kMaxFabrics = 64;
constexpr std::size_t kMaxKeyValues = std::size_t{16} << 20;  // 128 MiB of keys

}  // namespace

const LinkLoads& FabricLoads::get(const CollectiveOp& op, const Topology& topo,
                                  const CostProfile& profile) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [groups, loads] : shapes_[{op.kind, op.algorithm}])
      if (groups == op.groups) return *loads;
  }
  // Outside the lock: may take a while.
  std::call_once(groups_once_, [&] { groups_ = capacity_groups(topo); });
  auto loads = std::make_unique<const LinkLoads>(link_loads(op, topo, profile, &groups_));
  std::lock_guard lock(mu_);
  return *shapes_[{op.kind, op.algorithm}].emplace_back(op.groups, std::move(loads)).second;
}

FabricPlans::FabricPlans(std::shared_ptr<FabricLoads> loads)
    : loads_(loads ? std::move(loads) : std::make_shared<FabricLoads>()) {}

UnitPlan FabricPlans::get(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                          const std::vector<double>* capacity) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [groups, plan] : shapes_[{op.kind, op.algorithm}])
      if (groups == op.groups) return plan;
  }
  // Outside the lock: may take a while.
  UnitPlan plan =
      unit_plan(loads_->get(op, topo, profile), capacity ? *capacity : capacities(topo, profile));
  std::lock_guard lock(mu_);
  shapes_[{op.kind, op.algorithm}].emplace_back(op.groups, plan);
  return plan;
}

std::shared_ptr<DemandCache> FabricPlans::demands(const CostProfile& profile) {
  std::lock_guard lock(mu_);
  for (auto& [kept, cache] : demands_)
    if (kept == profile) {
      if (cache->size() >= kMaxDemands) cache = std::make_shared<DemandCache>();
      return cache;
    }
  if (demands_.size() >= kMaxProfiles) demands_.erase(demands_.begin());
  return demands_.emplace_back(profile, std::make_shared<DemandCache>()).second;
}

NetStats FabricPlans::stats(const CollectiveOp& op, const Topology& topo,
                            const CostProfile& profile) {
  if (!(op.bytes > 0) || !std::isfinite(op.bytes)) lower_collective(op, topo, profile);  // throws
  return get(op, topo, profile).stats(op.bytes);
}

const std::vector<double>& FabricPlans::capacities(const Topology& topo,
                                                   const CostProfile& profile) {
  std::call_once(capacities_once_, [&] { capacities_ = link_capacities(topo, profile); });
  return capacities_;
}

std::shared_ptr<FabricPlans> FabricPlanCache::get(const Topology& topo,
                                                  const CostProfile& profile) {
  static_assert(kGraphProfileValues + kRateProfileValues == kProfileKeyValues);
  ProfileKey profile_key;
  std::size_t n = 0;
  const auto put = [&](double x) { profile_key[n++] = x; };
  visit_profile_key(profile, put);
  visit_profile_rates(profile, put);
  const std::string& builder = topo.builder_key();
  const bool by_builder = !builder.empty();
  if (by_builder && last_ && last_key_.second == profile_key && last_key_.first == builder)
    return last_;
  std::pair<std::string, ProfileKey> built{builder, profile_key};
  std::shared_ptr<FabricPlans> plans;
  if (by_builder)
    if (const auto it = built_.find(built); it != built_.end()) plans = it->second;
  if (!plans) {
    const std::uint64_t h = key_hash(topo, profile);
    Graph* graph = nullptr;
    for (auto [it, end] = graphs_.equal_range(h); it != end && !graph; ++it)
      if (key_equals(it->second.key, topo, profile)) graph = &it->second;
    if (graph)
      for (const auto& [rates, kept] : graph->plans)
        if (rates_equal(rates, topo, profile)) {
          plans = kept;
          break;
        }
    if (!plans) {
      std::vector<double> rates =
          values_of(rates_size(topo), [&](auto&& f) { visit_rates(topo, profile, f); });
      const std::size_t need = rates.size() + (graph ? 0 : key_size(topo));
      if (plans_ >= kMaxFabrics || key_values_ + need > kMaxKeyValues) {
        graphs_.clear();
        built_.clear();
        key_values_ = 0;
        plans_ = 0;
        graph = nullptr;
      }
      if (!graph) {
        std::vector<double> key =
            values_of(key_size(topo), [&](auto&& f) { visit_key(topo, profile, f); });
        key_values_ += key.size();
        graph =
            &graphs_.emplace(h, Graph{std::move(key), std::make_shared<FabricLoads>(), {}})->second;
      }
      key_values_ += rates.size();
      ++plans_;
      plans = std::make_shared<FabricPlans>(graph->loads);
      graph->plans.emplace_back(std::move(rates), plans);
    }
    if (by_builder) {
      if (built_.size() >= kMaxFabrics) built_.clear();
      built_.emplace(built, plans);
    }
  }
  if (by_builder) {
    last_key_ = std::move(built);
    last_ = plans;
  }
  return plans;
}

NetStats collective_stats(const CollectiveOp& op, const Topology& topo,
                          const CostProfile& profile) {
  return FabricPlans().stats(op, topo, profile);
}

}  // namespace zerosim
