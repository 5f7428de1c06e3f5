// AnalyticNetwork: per-phase link loads, the busiest link sets the phase time.
#include "sim/net/analytic_network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace zerosim {

AnalyticNetwork::AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile)
    : AnalyticNetwork(engine, topo, profile, false) {}

AnalyticNetwork::AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile,
                                 bool full, std::shared_ptr<FabricPlans> plans)
    : engine_(engine), topo_(topo), profile_(profile), full_(full) {
  if (!full_) shared_ = plans ? std::move(plans) : std::make_shared<FabricPlans>();
  // The fabric's shared capacities when there are plans to share (no copy per scenario).
  if (!shared_) own_capacity_ = link_capacities(topo, profile);
  capacity_ = shared_ ? &shared_->capacities(topo, profile) : &own_capacity_;
}

double AnalyticNetwork::plan_time(const CollectivePlan& plan) {
  if (load_.empty()) load_.assign(capacity_->size(), 0.0);  // per-shape plans never need it
  double total = 0;
  for (const Phase& phase : plan.phases) {
    for (const Flow& fl : phase.flows) {
      if (fl.src_gpu == fl.dst_gpu || !(fl.bytes > 0)) continue;
      const Route& r = topo_.route(fl.src_gpu, fl.dst_gpu);
      (r.crosses_nodes ? stats_.inter_node_bytes : stats_.intra_node_bytes) += fl.bytes;
      ++stats_.flows;
      for (LinkId l : r.links) {
        if (load_[l] == 0) touched_.push_back(l);
        load_[l] += fl.bytes;
      }
    }
    double busiest = 0;
    for (std::int32_t l : touched_) {
      busiest = std::max(busiest, load_[l] / (*capacity_)[l]);
      load_[l] = 0;
    }
    touched_.clear();
    total += phase.latency_s + busiest * phase.wire;
  }
  return total;
}

std::pair<double, NetStats> AnalyticNetwork::op_cost(const CollectiveOp& op) {
  if (full_) {
    const Cached* c = cache_.find(op);
    if (!c) {
      if (is_nccl_collective(op)) {   // NCCL's choice over the patterns, each lowered and routed
        select_algorithm(op, topo_);  // validates
        const UnitPlan p = unit_plan_by_flows(op, topo_, profile_, *capacity_);
        c = &cache_.insert(op, Cached{p.op_time_s(op, profile_), p.stats(op.bytes)});
      } else {
        const NetStats saved = std::exchange(stats_, NetStats{});  // plan_time adds this op's own
        const double t = plan_time(lower_collective(op, topo_, profile_)) +
                         p2p_small_message_s(op, topo_, profile_);
        c = &cache_.insert(op, Cached{t, stats_});
        stats_ = saved;
      }
    }
    return {c->time_s, c->stats};
  }
  // A step's ops share a few group lists: look for the same list first, then for an equal one.
  const UnitPlan* plan = nullptr;
  for (const Shape& s : shapes_)
    if (&s.groups.get() == &op.groups.get() && s.kind == op.kind && s.algorithm == op.algorithm) {
      plan = &s.plan;
      break;
    }
  if (!plan)
    for (const Shape& s : shapes_)
      if (s.kind == op.kind && s.algorithm == op.algorithm && s.groups == op.groups) {
        plan = &s.plan;
        break;
      }
  if (!plan) {
    if (!(op.bytes > 0) || !std::isfinite(op.bytes))
      lower_collective(op, topo_, profile_);  // throws the size rule's InputError
    shapes_.push_back(
        Shape{op.kind, op.algorithm, op.groups, shared_->get(op, topo_, profile_, capacity_)});
    plan = &shapes_.back().plan;
  }
  return {plan->op_time_s(op, profile_) + p2p_small_message_s(op, topo_, profile_),
          plan->stats(op.bytes)};
}

void AnalyticNetwork::start(const CollectiveOp& op, std::function<void()> on_done) {
  const auto [time_s, s] = op_cost(op);
  stats_ += s;
  engine_.schedule_after(time_s, std::move(on_done));
}

}  // namespace zerosim
