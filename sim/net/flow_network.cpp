// FlowNetwork: phases -> solver flows -> lazily re-solved rates -> exact completion times.
#include "sim/net/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <utility>

namespace zerosim {

namespace {
// Completions closer than this (relative) are one event: symmetric flows whose times differ only by
// rounding must not cost one re-solve each.
constexpr double kRelEps = 1e-9;
}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, const Topology& topo, const CostProfile& profile)
    : engine_(engine), topo_(topo), profile_(profile) {
  for (const LinkInfo& l : topo.links())
    solver_.add_link(l.bandwidth_Bps * profile.link_class(l.cls).efficiency);
}

void FlowNetwork::start(const CollectiveOp& op, std::function<void()> on_done) {
  if (!shortcuts_) {
    start_resolved(resolve_plan(lower_collective(op, topo_, profile_)), std::move(on_done));
    return;
  }
  if (const auto* hit = cache_.find(op)) return start_resolved(*hit, std::move(on_done));
  start_resolved(cache_.insert(op, resolve_plan(lower_collective(op, topo_, profile_))),
                 std::move(on_done));
}

void FlowNetwork::start_plan(CollectivePlan plan, std::function<void()> on_done) {
  start_resolved(resolve_plan(plan), std::move(on_done));
}

std::shared_ptr<const FlowNetwork::ResolvedPlan> FlowNetwork::resolve_plan(
    const CollectivePlan& plan) const {
  auto out = std::make_shared<ResolvedPlan>();
  std::map<std::pair<std::vector<std::int32_t>, double>, std::size_t> seen;  // merge key -> flow
  for (const Phase& ph : plan.phases) {
    ResolvedPhase rp;
    rp.latency_s = ph.latency_s;
    seen.clear();
    for (const Flow& fl : ph.flows) {
      if (fl.src_gpu == fl.dst_gpu || !(fl.bytes > 0)) continue;  // local copy: no network time
      const Route& r = topo_.route(fl.src_gpu, fl.dst_gpu);
      if (shortcuts_) {
        auto [it, fresh] = seen.try_emplace(
            {std::vector<std::int32_t>(r.links.begin(), r.links.end()), fl.bytes}, rp.flows.size());
        if (!fresh) {
          rp.flows[it->second].weight += 1;
          continue;
        }
      }
      ResolvedFlow f;
      f.link_begin = static_cast<std::int64_t>(out->links.size());
      f.link_count = static_cast<std::int32_t>(r.links.size());
      f.crosses_nodes = r.crosses_nodes;
      f.bytes = fl.bytes;
      out->links.insert(out->links.end(), r.links.begin(), r.links.end());
      rp.flows.push_back(f);
    }
    out->phases.push_back(std::move(rp));
  }
  return out;
}

void FlowNetwork::start_resolved(std::shared_ptr<const ResolvedPlan> plan,
                                 std::function<void()> on_done) {
  int c;
  if (!free_colls_.empty()) {
    c = free_colls_.back();
    free_colls_.pop_back();
  } else {
    c = static_cast<int>(colls_.size());
    colls_.emplace_back();
  }
  Coll& coll = colls_[c];
  coll.plan = std::move(plan);
  coll.phase = 0;
  coll.outstanding = 0;
  coll.on_done = std::move(on_done);
  if (coll.plan->phases.empty()) {
    auto cb = std::move(coll.on_done);
    coll.plan.reset();
    free_colls_.push_back(c);
    engine_.schedule_at(engine_.now(), std::move(cb));
    return;
  }
  engine_.schedule_after(coll.plan->phases[0].latency_s, [this, c] { begin_phase(c); });
}

void FlowNetwork::begin_phase(int c) {
  const double now = engine_.now();
  Coll& coll = colls_[c];
  const ResolvedPlan& plan = *coll.plan;
  const ResolvedPhase& phase = plan.phases[coll.phase];
  for (const ResolvedFlow& fl : phase.flows) {
    (fl.crosses_nodes ? stats_.inter_node_bytes : stats_.intra_node_bytes) += fl.bytes * fl.weight;
    ++stats_.flows;
    const FairShare::FlowId f =
        solver_.add_flow(std::span<const std::int32_t>(plan.links.data() + fl.link_begin,
                                                       static_cast<std::size_t>(fl.link_count)),
                         fl.weight);
    const auto need = static_cast<std::size_t>(solver_.flow_capacity());
    if (remaining_.size() < need) {
      remaining_.resize(need);
      settled_at_.resize(need);
      rate_.resize(need);
      version_.resize(need);
      coll_of_.resize(need);
    }
    remaining_[f] = fl.bytes * fl.weight;  // the aggregate's rate is weight x one member's
    settled_at_[f] = now;
    rate_[f] = 0;
    ++version_[f];
    coll_of_[f] = c;
    ++coll.outstanding;
    dirty_ = true;
  }
  if (coll.outstanding == 0) finish_phase(c);
}

void FlowNetwork::finish_phase(int c) {
  Coll& coll = colls_[c];
  if (++coll.phase < coll.plan->phases.size()) {
    engine_.schedule_after(coll.plan->phases[coll.phase].latency_s, [this, c] { begin_phase(c); });
    return;
  }
  auto cb = std::move(coll.on_done);
  coll.plan.reset();
  free_colls_.push_back(c);
  // Through the engine, so a callback that starts another collective never re-enters advance_to.
  engine_.schedule_at(engine_.now(), std::move(cb));
}

void FlowNetwork::resolve() const {
  if (!dirty_) return;
  dirty_ = false;
  const double now = engine_.now();
  for (FairShare::FlowId f : solver_.solve()) {
    const double r = solver_.rate(f);
    if (r == rate_[f]) continue;  // unchanged: its scheduled completion stays exact
    remaining_[f] = std::max(0.0, remaining_[f] - rate_[f] * (now - settled_at_[f]));
    settled_at_[f] = now;
    rate_[f] = r;
    ++version_[f];
    if (r > 0) {
      const double t = std::isinf(r) ? now : now + remaining_[f] / r;
      done_heap_.push_back(Done{t, f, version_[f]});
      std::push_heap(done_heap_.begin(), done_heap_.end(), DoneLater{});
    }
  }
}

double FlowNetwork::next_event_time() const {
  resolve();
  while (!done_heap_.empty()) {
    const Done& top = done_heap_.front();
    if (solver_.alive(top.flow) && version_[top.flow] == top.version) return top.time;
    std::pop_heap(done_heap_.begin(), done_heap_.end(), DoneLater{});
    done_heap_.pop_back();
  }
  return kNever;
}

void FlowNetwork::advance_to(double t) {
  resolve();
  const double limit = t + kRelEps * std::abs(t);
  finished_.clear();
  while (!done_heap_.empty() && done_heap_.front().time <= limit) {
    const Done d = done_heap_.front();
    std::pop_heap(done_heap_.begin(), done_heap_.end(), DoneLater{});
    done_heap_.pop_back();
    if (!solver_.alive(d.flow) || version_[d.flow] != d.version) continue;
    finished_.push_back(d.flow);
  }
  for (FairShare::FlowId f : finished_) {
    solver_.remove_flow(f);
    ++version_[f];
    remaining_[f] = 0;
    rate_[f] = 0;
    dirty_ = true;
    const int c = coll_of_[f];
    if (--colls_[c].outstanding == 0) finish_phase(c);
  }
}

}  // namespace zerosim
