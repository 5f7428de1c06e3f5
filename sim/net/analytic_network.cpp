// AnalyticNetwork: per-phase link loads per class; concurrent transfers share each class's rate.
#include "sim/net/analytic_network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
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
  demands_ = shared_ ? shared_->demands(profile) : std::make_shared<DemandCache>();
}

namespace {
double largest(const ClassLoads& c) { return *std::max_element(c.begin(), c.end()); }
}  // namespace

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
    Segment seg{phase.latency_s, {}};
    for (std::int32_t l : touched_) {
      double& w = seg.work_s[static_cast<std::size_t>(topo_.link(l).cls)];
      w = std::max(w, load_[l] / (*capacity_)[l] * phase.wire);
      load_[l] = 0;
    }
    touched_.clear();
    total += phase.latency_s + largest(seg.work_s);
    if (segments_out_) segments_out_->push_back(seg);
  }
  return total;
}

void AnalyticNetwork::plan_segments(const UnitPlan& plan, const CollectiveOp& op,
                                    const CostProfile& profile, double extra_latency_s, Demand& d) {
  d.segments.clear();
  if (plan.nccl) {
    // NCCL's choice: its latency, then the lowered pattern's classes (the ring's for every choice
    // but NVLS, as the flow tier lowers it) scaled so that the busiest takes the choice's time.
    const NcclChoice c = plan.nccl_choice(op, profile);
    const double alone =
        c.time_s(op.bytes, plan.pattern_s_per_byte[static_cast<std::size_t>(c.pattern)],
                 busbw_factor(op.kind, plan.shape.ranks));
    const ClassLoads& lowered =
        c.pattern == TrafficPattern::Nvls ? plan.nvls_class : plan.ring_class;
    const double top = largest(lowered);
    Segment s{c.latency_s + extra_latency_s, {}};
    const double transfer = alone - c.latency_s;
    if (top > 0 && transfer > 0)
      for (std::size_t k = 0; k < kLinkClasses; ++k) s.work_s[k] = transfer * (lowered[k] / top);
    d.segments.push_back(s);
    d.time_s = alone + extra_latency_s;
    return;
  }
  double t = 0;
  for (const UnitPlan::UnitPhase& p : plan.phases) {
    Segment s{p.latency_s, {}};
    for (std::size_t k = 0; k < kLinkClasses; ++k) s.work_s[k] = p.class_s_per_byte[k] * op.bytes;
    t += p.latency_s + p.busiest_s_per_byte * op.bytes;
    d.segments.push_back(s);
  }
  if (d.segments.empty()) d.segments.push_back({});
  d.segments.front().latency_s += extra_latency_s;
  d.time_s = t + extra_latency_s;
}

const UnitPlan& AnalyticNetwork::shape_plan(const CollectiveOp& op) {
  // A step's ops share a few group lists: look for the same list first, then for an equal one.
  for (const Shape& s : shapes_)
    if (&s.groups.get() == &op.groups.get() && s.kind == op.kind && s.algorithm == op.algorithm)
      return s.plan;
  for (const Shape& s : shapes_)
    if (s.kind == op.kind && s.algorithm == op.algorithm && s.groups == op.groups) return s.plan;
  if (!(op.bytes > 0) || !std::isfinite(op.bytes))
    lower_collective(op, topo_, profile_);  // throws the size rule's InputError
  shapes_.push_back(
      Shape{op.kind, op.algorithm, op.groups, shared_->get(op, topo_, profile_, capacity_)});
  return shapes_.back().plan;
}

void AnalyticNetwork::expect_ops(std::span<const CollectiveOp> ops) {
  expected_ops_ = ops;
  op_class_ = {};
  class_slots_.clear();
}

void AnalyticNetwork::expect_classes(std::span<const int> op_class, int classes) {
  if (op_class.size() != expected_ops_.size()) return;  // not expect_ops' ops: no slots
  op_class_ = op_class;
  class_slots_.assign(static_cast<std::size_t>(std::max(0, classes)), ClassSlot{});
}

const AnalyticNetwork::Demand& AnalyticNetwork::op_demand(const CollectiveOp& op) {
  const std::less<const CollectiveOp*> before;
  if (op_class_.empty() || before(&op, expected_ops_.data()) ||
      !before(&op, expected_ops_.data() + expected_ops_.size()))
    return cached_demand(op);
  const int c = op_class_[static_cast<std::size_t>(std::distance(expected_ops_.data(), &op))];
  if (c < 0 || static_cast<std::size_t>(c) >= class_slots_.size()) return cached_demand(op);
  ClassSlot& slot = class_slots_[static_cast<std::size_t>(c)];
  const void* groups = &op.groups.get();
  if (slot.demand && slot.kind == op.kind && slot.algorithm == op.algorithm &&
      slot.nccl_algo == op.nccl_algo && slot.nccl_proto == op.nccl_proto &&
      slot.bytes == op.bytes && slot.groups == groups)
    return *slot.demand;
  slot = ClassSlot{&cached_demand(op), op.kind,  op.algorithm, op.nccl_algo,
                   op.nccl_proto,      op.bytes, groups};
  return *slot.demand;
}

const AnalyticNetwork::Demand& AnalyticNetwork::cached_demand(const CollectiveOp& op) {
  if (const Demand* c = demands_->find(op)) return *c;
  Demand d;
  if (full_ && is_nccl_collective(op)) {  // NCCL's choice over the patterns, lowered and routed
    select_algorithm(op, topo_);          // validates
    const UnitPlan p = unit_plan_by_flows(op, topo_, profile_, *capacity_);
    plan_segments(p, op, profile_, 0, d);
    d.stats = p.stats(op.bytes);
  } else if (full_) {
    const NetStats saved = std::exchange(stats_, NetStats{});  // plan_time adds this op's own
    segments_out_ = &d.segments;
    const double p2p = p2p_small_message_s(op, topo_, profile_);
    d.time_s = plan_time(lower_collective(op, topo_, profile_)) + p2p;
    segments_out_ = nullptr;
    if (d.segments.empty()) d.segments.push_back({});
    d.segments.front().latency_s += p2p;
    d.stats = std::exchange(stats_, saved);
  } else {
    const UnitPlan& plan = shape_plan(op);
    plan_segments(plan, op, profile_, p2p_small_message_s(op, topo_, profile_), d);
    d.stats = plan.stats(op.bytes);
  }
  return demands_->insert(op, std::move(d));
}

std::pair<double, NetStats> AnalyticNetwork::op_cost(const CollectiveOp& op) {
  const Demand& d = op_demand(op);
  return {d.time_s, d.stats};
}

void AnalyticNetwork::start(const CollectiveOp& op, Engine::Action on_done) {
  const Demand& d = op_demand(op);
  stats_ += d.stats;
  int j;
  if (!free_jobs_.empty()) {
    j = free_jobs_.back();
    free_jobs_.pop_back();
  } else {
    j = static_cast<int>(jobs_.size());
    jobs_.emplace_back();
  }
  Job& job = jobs_[static_cast<std::size_t>(j)];
  job.segments = &d.segments;
  job.seg = 0;
  job.transferring = false;
  job.on_done = on_done;
  engine_.schedule_after(
      (*job.segments)[0].latency_s,
      Engine::bind<&AnalyticNetwork::begin_transfer>(this, static_cast<std::size_t>(j)));
}

void AnalyticNetwork::settle(double t) {
  next_known_ = false;
  const double dt = t - last_;
  last_ = t;
  if (!(dt > 0)) return;
  for (int j : transferring_) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    for (std::size_t k = 0; k < kLinkClasses; ++k)
      if (job.on[k]) job.left[k] -= dt / sharers_[k];
  }
}

void AnalyticNetwork::begin_transfer(std::size_t j) {
  settle(engine_.now());
  Job& job = jobs_[j];
  job.left = (*job.segments)[job.seg].work_s;
  bool any = false;
  for (std::size_t k = 0; k < kLinkClasses; ++k) {
    job.on[k] = job.left[k] > 0;
    if (job.on[k]) {
      ++sharers_[k];
      any = true;
    }
  }
  if (!any) {
    end_segment(static_cast<int>(j));
    return;
  }
  job.transferring = true;
  transferring_.push_back(static_cast<int>(j));
  next_known_ = false;
}

void AnalyticNetwork::end_segment(int j) {
  Job& job = jobs_[static_cast<std::size_t>(j)];
  job.transferring = false;
  if (++job.seg < job.segments->size()) {
    engine_.schedule_after(
        (*job.segments)[job.seg].latency_s,
        Engine::bind<&AnalyticNetwork::begin_transfer>(this, static_cast<std::size_t>(j)));
    return;
  }
  job.segments = nullptr;
  free_jobs_.push_back(j);
  engine_.schedule_at(engine_.now(), job.on_done);
}

double AnalyticNetwork::next_event_time() const {
  // The engine asks before every event; the answer changes only with the transfers' state
  // (settle, begin_transfer, advance_to), which clears the kept one.
  if (next_known_) return next_;
  double first = kNever;
  for (int j : transferring_) {
    const Job& job = jobs_[static_cast<std::size_t>(j)];
    for (std::size_t k = 0; k < kLinkClasses; ++k)
      if (job.on[k]) first = std::min(first, last_ + std::max(job.left[k], 0.0) * sharers_[k]);
  }
  next_ = first;
  next_known_ = true;
  return first;
}

void AnalyticNetwork::advance_to(double t) {
  settle(t);
  // Work ends now when what is left is rounding: a 1e-9 share of the segment's own work on that
  // class, or a few ulps of t (so that the next event time is always later than t). Neither
  // depends on when the segment runs beyond those ulps, so a micro-step that repeats another
  // repeats its timing (accumulation.hpp extends steps on that).
  const double ulps_of_t = 8 * std::numeric_limits<double>::epsilon() * std::abs(t);
  const std::array<int, kLinkClasses> sharers = sharers_;  // the shares the work ran at
  std::size_t keep = 0;
  std::vector<int>& ended = ended_;  // end_segment only schedules: nothing re-enters here
  ended.clear();
  for (int j : transferring_) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    const auto& work = (*job.segments)[job.seg].work_s;
    bool busy = false;
    for (std::size_t k = 0; k < kLinkClasses; ++k)
      if (job.on[k]) {
        if (job.left[k] <= 1e-9 * work[k] || job.left[k] * sharers[k] <= ulps_of_t) {
          job.on[k] = false;
          --sharers_[k];
        } else {
          busy = true;
        }
      }
    if (busy)
      transferring_[keep++] = j;
    else
      ended.push_back(j);
  }
  transferring_.resize(keep);
  next_known_ = false;
  for (int j : ended) end_segment(j);
}

}  // namespace zerosim
