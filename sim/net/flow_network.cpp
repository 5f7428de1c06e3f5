// FlowNetwork: phases -> solver flows -> lazily re-solved rates -> exact completion times.
#include "sim/net/flow_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/collectives/nccl_model.hpp"
#include "sim/core/error.hpp"
#include "sim/net/folding.hpp"

namespace zerosim {

namespace {
struct MergeKeyHash {
  std::size_t operator()(const std::tuple<int, int, double>& k) const {
    std::uint64_t h =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(std::get<0>(k))) << 32) |
        static_cast<std::uint32_t>(std::get<1>(k));
    h ^= std::hash<double>{}(std::get<2>(k)) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};
// Completions closer than this (relative) are one event: symmetric flows whose times differ only by
// rounding must not cost one re-solve each.
constexpr double kRelEps = 1e-9;
}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, const Topology& topo, const CostProfile& profile)
    : engine_(engine), topo_(topo), profile_(profile) {}

// Solver links: the real links, or (symmetry mode) the classes of the link partition. Deferred to
// the first start so that set_shortcuts / set_symmetry can choose.
void FlowNetwork::init_links() {
  if (links_ready_) return;
  links_ready_ = true;
  std::vector<double> caps;
  for (const LinkInfo& l : topo_.links())
    caps.push_back(l.bandwidth_Bps * profile_.link_class(l.cls).efficiency);
  if (!symmetry()) {
    for (double c : caps) solver_.add_link(c);
    return;
  }
  part_ = std::make_unique<LinkPartition>(caps);
  for (int k = 0; k < part_->class_count(); ++k) solver_.add_link(part_->quotient_capacity(k));
}

CollectivePlan FlowNetwork::lower(const CollectiveOp& op, bool fold, TrafficPattern pattern) const {
  // Each flow of a phase is routed and held in memory (~300 bytes with its route) before the
  // symmetry reduction sees it: refuse, with the way out, what cannot fit rather than run for
  // minutes into bad_alloc (an all-to-all of 8192 GPUs without folding: 67M flows).
  std::uint64_t flows = max_phase_flows(op, topo_);
  if (fold) flows /= static_cast<std::uint64_t>(topo_.rotation_blocks());
  if (flows > kMaxPhaseFlows)
    throw InputError("<command line>", "--tier",
                     fmt::format("the flow tier would route {} flows in one phase of {} on {} "
                                 "GPUs (at most {}, about 10 GiB); use --tier analytic, which "
                                 "plans it without per-pair flows",
                                 flows, to_string(op.kind), topo_.gpu_count(), kMaxPhaseFlows));
  const int limit = fold ? topo_.rotation_block_gpus() : std::numeric_limits<int>::max();
  return is_nccl_collective(op) ? lower_pattern(op, topo_, profile_, pattern, limit)
                                : lower_collective(op, topo_, profile_, limit);
}

bool FlowNetwork::invariant(const CollectiveOp& op) {
  // By the shared list's address (a step has a few lists); the memo holds a reference to each,
  // so no other list can take its address later.
  for (const auto& [k, v] : invariant_memo_)
    if (&k.get() == &op.groups.get()) return v;
  const bool v = rotation_invariant(op.groups, topo_);
  if (invariant_memo_.size() < 64) invariant_memo_.emplace_back(op.groups, v);
  return v;
}

void FlowNetwork::decide_folding(bool all_invariant) {
  fold_blocks_ = folding_allowed_ && symmetry() && all_invariant && topo_.rotation_blocks() > 1
                     ? topo_.rotation_blocks()
                     : 1;
}

void FlowNetwork::expect_ops(std::span<const CollectiveOp> ops) {
  if (fold_blocks_ != 0) return;  // decided by an op already started
  bool all = true;
  for (const CollectiveOp& op : ops)
    if (!(all = invariant(op))) break;
  decide_folding(all);
}

std::shared_ptr<const FlowNetwork::ResolvedPlan> FlowNetwork::pattern_plan(const CollectiveOp& unit,
                                                                           TrafficPattern pattern,
                                                                           bool fold) {
  auto& cache = pattern == TrafficPattern::Nvls ? nvls_cache_ : cache_;
  if (const auto* hit = cache.find(unit)) return *hit;
  return cache.insert(unit, resolve_plan(lower(unit, fold, pattern), fold));
}

std::pair<double, double> FlowNetwork::busiest_per_byte(const ResolvedPlan& plan) const {
  // Loads summed over the plan's flows; under folding the block-0 sources' flows on the folded
  // links are the real links' loads (the rotation maps every other source's flows onto them).
  std::vector<double> load(topo_.links().size(), 0.0);
  double all = 0, network = 0;
  for (const ResolvedPhase& ph : plan.phases) {
    std::vector<std::int32_t> touched;
    for (const ResolvedFlow& fl : ph.flows)
      for (std::int64_t k = fl.link_begin; k < fl.link_begin + fl.link_count; ++k) {
        const auto l = static_cast<std::size_t>(plan.links[static_cast<std::size_t>(k)]);
        if (load[l] == 0) touched.push_back(static_cast<std::int32_t>(l));
        load[l] += fl.bytes * fl.weight;
      }
    double a = 0, n = 0;
    for (std::int32_t l : touched) {
      const LinkInfo& li = topo_.link(l);
      const double t = load[static_cast<std::size_t>(l)] /
                       (li.bandwidth_Bps * profile_.link_class(li.cls).efficiency) * ph.wire;
      a = std::max(a, t);
      if (li.cls == LinkClass::Network) n = std::max(n, t);
      load[static_cast<std::size_t>(l)] = 0;
    }
    all += a;
    network += n;
  }
  return {all, network};
}

void FlowNetwork::start_nccl(const CollectiveOp& op, Engine::Action on_done) {
  CollectiveOp unit = op;
  unit.bytes = 1;
  unit.nccl_algo = NcclAlgo::Auto;  // plans do not depend on the forced choice
  unit.nccl_proto = NcclProto::Auto;
  if (fold_blocks_ == 0) decide_folding(false);  // not told what else will run: no folding
  const bool fold = shortcuts_ && fold_blocks_ > 1;
  if (fold && !invariant(op))
    throw std::logic_error(
        "flow tier: an op that the block rotation does not map onto itself "
        "started while folding (expect_ops was not told of it)");
  const UnitPlan* up = unit_plans_.find(unit);
  if (!up) {
    select_algorithm(op, topo_);  // validates the groups once per shape
    UnitPlan plan;
    if (op.kind == CollKind::AllReduce || !shortcuts_) {
      // NVLS patterns: the shared analytic plans, which lower them node by node.
      if (!fabric_) fabric_ = std::make_shared<FabricPlans>();
      plan = fabric_->get(unit, topo_, profile_);
    } else {
      // all_gather / reduce_scatter price only the ring: its per-byte busiest link comes from the
      // plan this network routes anyway (no second routing of a 32768-GPU ring).
      plan.nccl = true;
      plan.shape = comm_shape(op, topo_);
      plan.pattern_s_per_byte[static_cast<std::size_t>(TrafficPattern::Ring)] =
          busiest_per_byte(*pattern_plan(unit, TrafficPattern::Ring, fold)).first;
    }
    up = &unit_plans_.insert(unit, std::move(plan));
  }
  const NcclChoice choice = up->nccl_choice(op, profile_);
  const TrafficPattern lowered =
      choice.pattern == TrafficPattern::Nvls ? TrafficPattern::Nvls : TrafficPattern::Ring;
  // The flows carry the lowered pattern's load; the wire factor makes their time on an idle
  // network the choice's (the NVLS tree runs on the ring's flows at the NVLS tree's time).
  const double u_choice = up->pattern_s_per_byte[static_cast<std::size_t>(choice.pattern)];
  const double u_lowered = up->pattern_s_per_byte[static_cast<std::size_t>(lowered)];
  const double wire = choice.effective_wire(u_choice, busbw_factor(op.kind, up->shape.ranks)) *
                      (u_lowered > 0 ? u_choice / u_lowered : 1.0);
  if (!shortcuts_) {
    start_resolved(resolve_plan(lower_pattern(op, topo_, profile_, lowered)), on_done, 1, wire,
                   choice.latency_s);
    return;
  }
  start_resolved(pattern_plan(unit, lowered, fold), on_done, op.bytes, wire, choice.latency_s);
}

void FlowNetwork::start(const CollectiveOp& op, Engine::Action on_done) {
  if (is_nccl_collective(op) && op.bytes > 0 && std::isfinite(op.bytes)) {
    start_nccl(op, on_done);
    return;
  }
  if (!shortcuts_ || !(op.bytes > 0) || !std::isfinite(op.bytes)) {  // lowering says why
    start_resolved(resolve_plan(lower(op)), on_done, 1, 1,
                   p2p_small_message_s(op, topo_, profile_));
    return;
  }
  if (fold_blocks_ == 0) decide_folding(false);  // not told what else will run: no folding
  const bool fold = fold_blocks_ > 1;
  if (fold && !invariant(op))
    throw std::logic_error(
        "flow tier: an op that the block rotation does not map onto itself "
        "started while folding (expect_ops was not told of it)");
  // Lowering is linear in the op's bytes, so the plan of one byte serves every size of a shape: a
  // step's buckets of different sizes route and refine their (qgZ: 2M-flow) phases once.
  CollectiveOp unit = op;
  unit.bytes = 1;
  const auto* hit = cache_.find(unit);
  start_resolved(hit ? *hit : cache_.insert(unit, resolve_plan(lower(unit, fold), fold)), on_done,
                 op.bytes, 1, p2p_small_message_s(op, topo_, profile_));
}

void FlowNetwork::start_plan(const CollectivePlan& plan, Engine::Action on_done) {
  init_links();
  start_resolved(resolve_plan(plan), on_done);
}

namespace {
// Routes on the builders' clusters have 2 to 6 links. For a big phase the link pool is reserved
// for 6 a flow: a block that large is mapped on its own, and pages never written cost nothing.
constexpr std::size_t kLinksPerFlowGuess = 6;
constexpr std::size_t kBigPhase = std::size_t{1} << 16;
}  // namespace

std::shared_ptr<const FlowNetwork::ResolvedPlan> FlowNetwork::resolve_plan(
    const CollectivePlan& plan, bool fold) const {
  auto out = std::make_shared<ResolvedPlan>();
  // Merge key: (src, dst, bytes). Flows with equal link lists are exactly those with equal (src,
  // dst): a route starts at its source GPU and ends at its destination. Phases whose lowering
  // merged equal pairs already (distinct_pairs) skip the map.
  std::unordered_map<std::tuple<int, int, double>, std::size_t, MergeKeyHash> seen;
  for (const Phase& ph : plan.phases) {
    ResolvedPhase rp;
    rp.latency_s = ph.latency_s;
    rp.wire = ph.wire;
    seen.clear();
    if (!ph.distinct_pairs) seen.reserve(ph.flows.size());
    // Sized up front: regrowing a 10^7-flow phase's arrays copied and page-faulted them twice.
    rp.flows.reserve(ph.flows.size());
    if (ph.flows.size() >= kBigPhase)
      out->links.reserve(out->links.size() + kLinksPerFlowGuess * ph.flows.size());
    // A run of consecutive flows of k > 1 images (Flow::images) stands for k copies of itself in
    // a row: its bytes are counted k times in that order, as the listed flows would be.
    std::size_t run_begin = 0;
    int run_images = 1;
    auto end_run = [&] {
      for (int k = 1; k < run_images; ++k)
        for (std::size_t i = run_begin; i < rp.flows.size(); ++i)
          (rp.flows[i].crosses_nodes ? rp.inter_node_bytes : rp.intra_node_bytes) +=
              rp.flows[i].bytes;
      run_images = 1;
    };
    for (const Flow& fl : ph.flows) {
      if (fl.src_gpu == fl.dst_gpu || !(fl.bytes > 0)) continue;  // local copy: no network time
      if (fl.images != run_images) {
        end_run();
        run_begin = rp.flows.size();
        run_images = fl.images;
      }
      if (shortcuts_ && !ph.distinct_pairs) {
        auto [it, fresh] = seen.try_emplace({fl.src_gpu, fl.dst_gpu, fl.bytes}, rp.flows.size());
        if (!fresh) {
          ResolvedFlow& same = rp.flows[it->second];
          same.weight += fl.images;
          (same.crosses_nodes ? rp.inter_node_bytes : rp.intra_node_bytes) += fl.bytes;
          continue;
        }
      }
      // Uncached: a plan routes each pair once (plans are cached), and an all-to-all has millions.
      ResolvedFlow f;
      f.link_begin = static_cast<std::int64_t>(out->links.size());
      const RouteInfo r = topo_.route_into(fl.src_gpu, fl.dst_gpu, out->links);
      f.link_count = static_cast<std::int32_t>(out->links.size() - f.link_begin);
      if (fold)
        for (auto k = static_cast<std::size_t>(f.link_begin); k < out->links.size(); ++k)
          out->links[k] = topo_.fold_link(out->links[k]);
      f.crosses_nodes = r.crosses_nodes;
      f.bytes = fl.bytes;
      f.weight = fl.images;
      (r.crosses_nodes ? rp.inter_node_bytes : rp.intra_node_bytes) += fl.bytes;
      rp.flows.push_back(f);
      rp.listed_flows += static_cast<std::uint64_t>(fl.images);
    }
    end_run();
    rp.full_flows = rp.listed_flows;
    if (fold) {  // each flow stands for its images in every block
      rp.inter_node_bytes *= topo_.rotation_blocks();
      rp.intra_node_bytes *= topo_.rotation_blocks();
      rp.full_flows *= static_cast<std::uint64_t>(topo_.rotation_blocks());
    }
    out->phases.push_back(std::move(rp));
  }
  return out;
}

void FlowNetwork::start_resolved(std::shared_ptr<const ResolvedPlan> plan, Engine::Action on_done,
                                 double scale, double wire, double latency_s) {
  init_links();
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
  coll.scale = scale;
  coll.wire = wire;
  coll.phase = 0;
  coll.outstanding = 0;
  coll.on_done = on_done;
  if (coll.plan->phases.empty()) {
    const Engine::Action cb = coll.on_done;
    coll.plan.reset();
    free_colls_.push_back(c);
    engine_.schedule_after(latency_s, cb);
    return;
  }
  engine_.schedule_after(
      latency_s + coll.plan->phases[0].latency_s,
      Engine::bind<&FlowNetwork::begin_phase>(this, static_cast<std::size_t>(c)));
}

FairShare::FlowId FlowNetwork::add_solver_flow(std::span<const std::int32_t> links, double weight,
                                               double remaining, int c) {
  const FairShare::FlowId f = solver_.add_flow(links, weight);
  const auto need = static_cast<std::size_t>(solver_.flow_capacity());
  if (remaining_.size() < need) {
    remaining_.resize(need);
    settled_at_.resize(need);
    rate_.resize(need);
    version_.resize(need);
    coll_of_.resize(need);
  }
  remaining_[f] = remaining;  // the aggregate's rate is weight x one member's
  settled_at_[f] = engine_.now();
  rate_[f] = 0;
  ++version_[f];
  coll_of_[f] = c;
  ++colls_[c].outstanding;
  dirty_ = true;
  return f;
}

void FlowNetwork::begin_phase(std::size_t coll_index) {
  const auto c = static_cast<int>(coll_index);
  Coll& coll = colls_[c];
  const ResolvedPlan& plan = *coll.plan;
  const ResolvedPhase& phase = plan.phases[coll.phase];
  stats_.inter_node_bytes += phase.inter_node_bytes * coll.scale;
  stats_.intra_node_bytes += phase.intra_node_bytes * coll.scale;
  stats_.flows += phase.full_flows;
  if (symmetry()) {
    if (!part_->revalidate(phase.quotient)) sync_partition(c);
    if (phase.listed_flows >= fallback_min_flows_ &&
        static_cast<double>(phase.quotient.flows.size()) >
            fallback_max_ratio_ * static_cast<double>(phase.listed_flows))
      leave_symmetry();
  }
  if (!symmetry()) {
    for (const ResolvedFlow& fl : phase.flows)
      add_solver_flow(std::span<const std::int32_t>(plan.links.data() + fl.link_begin,
                                                    static_cast<std::size_t>(fl.link_count)),
                      fl.weight, fl.bytes * coll.scale * coll.wire * phase.wire * fl.weight, c);
    stats_.solver_flows += phase.flows.size();
  } else {
    const QuotientPhase& q = phase.quotient;
    coll.flows.clear();
    for (const PlanFlow& fl : q.flows)
      coll.flows.push_back(add_solver_flow(
          std::span<const std::int32_t>(q.links.data() + fl.link_begin,
                                        static_cast<std::size_t>(fl.link_count)),
          fl.weight, fl.bytes * coll.scale * coll.wire * phase.wire * fl.weight, c));
    stats_.solver_flows += q.flows.size();
  }
  coll.in_solver = coll.outstanding > 0;
  if (coll.outstanding == 0) finish_phase(c);
}

bool FlowNetwork::refresh(LinkPartition& part, const ResolvedPlan& plan, const ResolvedPhase& ph,
                          std::size_t max_classes) {
  if (ph.quotient.version == part.version()) return false;
  part.refine(ph.flows, plan.links, ph.quotient, max_classes);
  return true;
}

std::vector<double> FlowNetwork::take_out(int k) {
  const double now = engine_.now();
  Coll& ck = colls_[k];
  std::vector<double> left(ck.flows.size(), -1);
  for (std::size_t a = 0; a < ck.flows.size(); ++a) {
    const FairShare::FlowId f = ck.flows[a];
    if (!solver_.alive(f) || coll_of_[f] != k) continue;
    left[a] = std::max(0.0, remaining_[f] - rate_[f] * (now - settled_at_[f])) / solver_.weight(f);
    solver_.remove_flow(f);
    ++version_[f];
    dirty_ = true;
  }
  ck.flows.clear();
  ck.outstanding = 0;
  return left;
}

std::vector<FlowNetwork::Snapshot> FlowNetwork::take_out_all() {
  std::vector<Snapshot> snap;
  for (int k = 0; k < static_cast<int>(colls_.size()); ++k)
    if (colls_[k].plan && colls_[k].in_solver)
      snap.push_back({k, colls_[k].plan->phases[colls_[k].phase].quotient.class_of, take_out(k)});
  return snap;
}

void FlowNetwork::leave_symmetry() {
  init_links();
  if (symmetry()) to_full(take_out_all());
}

void FlowNetwork::to_full(const std::vector<Snapshot>& snap) {
  symmetry_ = false;
  solver_ = FairShare();
  for (const LinkInfo& l : topo_.links())
    solver_.add_link(l.bandwidth_Bps * profile_.link_class(l.cls).efficiency);
  dirty_ = true;
  // Every member of a class has the class's remaining bytes.
  for (const Snapshot& s : snap) {
    const ResolvedPlan& plan = *colls_[s.coll].plan;
    const ResolvedPhase& ph = plan.phases[colls_[s.coll].phase];
    for (std::size_t i = 0; i < ph.flows.size(); ++i) {
      const double member = s.remaining[s.class_of[i]];
      if (member < 0) continue;
      const ResolvedFlow& fl = ph.flows[i];
      add_solver_flow(std::span<const std::int32_t>(plan.links.data() + fl.link_begin,
                                                    static_cast<std::size_t>(fl.link_count)),
                      fl.weight, member * fl.weight, s.coll);
    }
  }
}

void FlowNetwork::sync_partition(int c) {
  std::vector<Snapshot> snap = take_out_all();
  const ResolvedPhase& next = colls_[c].plan->phases[colls_[c].phase];
  const std::size_t max_classes =
      next.listed_flows >= fallback_min_flows_
          ? static_cast<std::size_t>(fallback_max_ratio_ * static_cast<double>(next.listed_flows))
          : SIZE_MAX;
  refresh(*part_, *colls_[c].plan, next, max_classes);
  if (next.quotient.too_fine) return to_full(snap);
  // Refining one phase can break another's equitability: that of a phase in flight, or of one of
  // the last phases begun, which would otherwise be refined again when it next begins (concurrent
  // collectives that alternate can split each other's link classes one step per turn). Then the
  // new phase and every such phase that it made stale are refined jointly to a common fixed point;
  // if that makes more of them stale, they join and it runs again.
  struct Member {
    const ResolvedPlan* plan;
    const ResolvedPhase* phase;
    bool joined = false;
  };
  std::vector<Member> others;
  others.reserve(snap.size() + recent_.size());
  for (const Snapshot& s : snap)
    others.push_back(
        {colls_[s.coll].plan.get(), &colls_[s.coll].plan->phases[colls_[s.coll].phase]});
  for (const auto& [plan, p] : recent_) others.push_back({plan.get(), &plan->phases[p]});
  std::vector<JointPhase> joint;
  for (;;) {
    bool grew = false;
    for (Member& m : others)
      if (!m.joined && m.phase != &next && !m.phase->quotient.too_fine &&
          !part_->revalidate(m.phase->quotient)) {
        m.joined = true;
        grew = true;
      }
    if (!grew) break;
    joint.clear();
    joint.push_back({next.flows, colls_[c].plan->links, &next.quotient});
    std::vector<const ResolvedPhase*> seen{&next};
    for (const Member& m : others) {
      if (!m.joined || std::find(seen.begin(), seen.end(), m.phase) != seen.end()) continue;
      seen.push_back(m.phase);
      joint.push_back({m.phase->flows, m.plan->links, &m.phase->quotient});
    }
    part_->refine_joint(joint, max_classes);
    if (next.quotient.too_fine) return to_full(snap);
  }
  // Remember this phase among the last ones begun.
  std::erase_if(recent_, [&](const auto& r) { return &r.first->phases[r.second] == &next; });
  recent_.emplace_back(colls_[c].plan, colls_[c].phase);
  if (recent_.size() > kRecentPhases) recent_.erase(recent_.begin());
  const int had = solver_.link_count();
  for (int k = had; k < part_->class_count(); ++k) solver_.add_link(part_->quotient_capacity(k));
  for (int k = 0; k < had; ++k)
    if (solver_.capacity(k) != part_->quotient_capacity(k))
      solver_.set_capacity(k, part_->quotient_capacity(k));
  // New classes refine old ones, so each takes its members' remaining bytes from its old class.
  for (const Snapshot& s : snap) {
    Coll& ck = colls_[s.coll];
    const QuotientPhase& q = ck.plan->phases[ck.phase].quotient;
    for (std::size_t a = 0; a < q.flows.size(); ++a) {
      const double left = s.remaining[s.class_of[q.rep[a]]];
      const PlanFlow& fl = q.flows[a];
      ck.flows.push_back(left < 0 ? -1
                                  : add_solver_flow(std::span<const std::int32_t>(
                                                        q.links.data() + fl.link_begin,
                                                        static_cast<std::size_t>(fl.link_count)),
                                                    fl.weight, left * fl.weight, s.coll));
    }
  }
}

void FlowNetwork::finish_phase(int c) {
  Coll& coll = colls_[c];
  coll.in_solver = false;
  coll.flows.clear();
  if (++coll.phase < coll.plan->phases.size()) {
    engine_.schedule_after(
        coll.plan->phases[coll.phase].latency_s,
        Engine::bind<&FlowNetwork::begin_phase>(this, static_cast<std::size_t>(c)));
    return;
  }
  const Engine::Action cb = coll.on_done;
  coll.plan.reset();
  free_colls_.push_back(c);
  // Through the engine, so a callback that starts another collective never re-enters advance_to.
  engine_.schedule_at(engine_.now(), cb);
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
