// AnalyticNetwork: per-phase link loads, the busiest link sets the phase time.
#include "sim/net/analytic_network.hpp"

#include <algorithm>
#include <utility>

namespace zerosim {

AnalyticNetwork::AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile)
    : engine_(engine), topo_(topo), profile_(profile) {
  capacity_.reserve(topo.links().size());
  for (const LinkInfo& l : topo.links())
    capacity_.push_back(l.bandwidth_Bps * profile.link_class(l.cls).efficiency);
  load_.assign(capacity_.size(), 0.0);
}

double AnalyticNetwork::plan_time(const CollectivePlan& plan) {
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
      busiest = std::max(busiest, load_[l] / capacity_[l]);
      load_[l] = 0;
    }
    touched_.clear();
    total += phase.latency_s + busiest;
  }
  return total;
}

void AnalyticNetwork::start(const CollectiveOp& op, std::function<void()> on_done) {
  const Cached* c = cache_.find(op);
  if (!c) {
    const NetStats saved = std::exchange(stats_, NetStats{});  // plan_time adds this op's own stats
    const double t = plan_time(lower_collective(op, topo_, profile_));
    c = &cache_.insert(op, Cached{t, stats_});
    stats_ = saved;
  }
  stats_.inter_node_bytes += c->stats.inter_node_bytes;
  stats_.intra_node_bytes += c->stats.intra_node_bytes;
  stats_.flows += c->stats.flows;
  engine_.schedule_after(c->time_s, std::move(on_done));
}

}  // namespace zerosim
