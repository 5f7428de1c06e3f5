// Per-byte analytic plans: the plain (lowered flows) computation and the rail all-to-all shortcut.
#include "sim/net/analytic_shortcuts.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "sim/collectives/nccl_model.hpp"
#include "sim/net/folding.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

double UnitPlan::time_s(double bytes) const {
  double t = 0;
  for (const UnitPhase& p : phases) t += p.latency_s + p.busiest_s_per_byte * bytes;
  return t;
}

NetStats UnitPlan::stats(double bytes) const {
  NetStats s = stats_per_byte;
  s.inter_node_bytes *= bytes;
  s.intra_node_bytes *= bytes;
  return s;
}

std::vector<double> link_capacities(const Topology& topo, const CostProfile& profile) {
  std::vector<double> c;
  c.reserve(topo.links().size());
  for (const LinkInfo& l : topo.links())
    c.push_back(l.bandwidth_Bps * profile.link_class(l.cls).efficiency);
  return c;
}

std::vector<int> capacity_groups(const Topology& topo) {
  std::vector<int> out;
  out.reserve(topo.links().size());
  std::map<std::pair<double, LinkClass>, int> index;
  int last = -1;
  std::pair<double, LinkClass> last_key{};
  for (const LinkInfo& l : topo.links()) {
    const std::pair key{l.bandwidth_Bps, l.cls};
    if (last < 0 || key != last_key) {  // a duplex link's two directions: one look-up
      last = index.emplace(key, static_cast<int>(index.size())).first->second;
      last_key = key;
    }
    out.push_back(last);
  }
  return out;
}

namespace {

// A phase's loads per capacity group: the most bytes on one of the group's links, the groups in
// the order their first link is added.
class GroupMax {
 public:
  explicit GroupMax(const std::vector<int>& groups) : groups_(groups) {
    slot_.assign(groups.empty() ? 0 : *std::max_element(groups.begin(), groups.end()) + 1, -1);
  }
  void add(LinkId l, LinkClass cls, double bytes, std::vector<LinkLoads::Load>& out) {
    int& s = slot_[static_cast<std::size_t>(groups_[static_cast<std::size_t>(l)])];
    if (s < 0) {
      s = static_cast<int>(out.size());
      out.push_back({l, cls, bytes});
    } else {
      double& b = out[static_cast<std::size_t>(s)].bytes;
      b = std::max(b, bytes);
    }
  }
  // Ready for the next phase (out: the phase's loads).
  void reset(const std::vector<LinkLoads::Load>& out) {
    for (const LinkLoads::Load& x : out)
      slot_[static_cast<std::size_t>(groups_[static_cast<std::size_t>(x.link)])] = -1;
  }

 private:
  const std::vector<int>& groups_;
  std::vector<int> slot_;  // per group: its index in the phase's loads, -1 if none yet
};

// Per phase: the busiest link's seconds per byte, over every link and per link class.
struct PhaseLoads {
  double all = 0, latency_s = 0;
  ClassLoads cls{};  // per link class; cls[Network] is the network links' busiest
};

// A phase's per-link loads (seconds per byte) reduced to the busiest overall and per class.
void reduce_loads(double t, LinkClass c, PhaseLoads& p) {
  p.all = std::max(p.all, t);
  double& m = p.cls[static_cast<std::size_t>(c)];
  m = std::max(m, t);
}

// The rate application of one pattern's phases.
std::vector<PhaseLoads> reduce_phases(const std::vector<LinkLoads::Phase>& phases,
                                      const std::vector<double>& capacity) {
  std::vector<PhaseLoads> out;
  out.reserve(phases.size());
  for (const LinkLoads::Phase& ph : phases) {
    PhaseLoads p;
    p.latency_s = ph.latency_s;
    for (const LinkLoads::Load& l : ph.loads)
      reduce_loads(l.bytes / capacity[static_cast<std::size_t>(l.link)] * ph.wire / ph.over, l.cls,
                   p);
    out.push_back(p);
  }
  return out;
}

// Per phase of `plan` (lowered at 1 byte): each capacity group's most bytes on a link; adds the
// plan's flows to stats when given.
// images: each flow stands for this many flows (folding: its images in every block), times its
// own Flow::images, in the byte totals and flow count. A folded flow's links are the block-0
// images of its own (Topology::fold_link), whose loads are every real link's of their orbits: the
// flows crossing a link of the orbit are the images of the block-0 flows crossing the orbit, each
// once (so the loads count Flow::images, not the blocks). Folded (images > 1), nullopt as soon as a
// link or a byte total of a phase would add unequal values: only sums of equal values are the same
// in any order, so only then are the folded sums the unfolded ones.
std::optional<std::vector<LinkLoads::Phase>> phase_loads(const CollectivePlan& plan,
                                                         const Topology& topo,
                                                         const std::vector<int>& groups,
                                                         NetStats* stats, int images = 1) {
  std::vector<LinkLoads::Phase> out;
  GroupMax by_group(groups);
  const auto n_links = static_cast<std::size_t>(topo.link_count());
  std::vector<double> load(n_links, 0.0), addend;
  if (images > 1) addend.assign(n_links, 0.0);
  std::vector<LinkId> touched, links;
  for (const Phase& phase : plan.phases) {
    std::array<double, 2> total_addend{};  // intra, inter: the phase's value added to each total
    for (const Flow& fl : phase.flows) {
      if (fl.src_gpu == fl.dst_gpu || !(fl.bytes > 0)) continue;
      // Not cached per pair: a plan is built once per fabric and shape, and a cache entry per
      // pair cost more to fill and to free than the walk.
      links.clear();
      const RouteInfo r = topo.route_into(fl.src_gpu, fl.dst_gpu, links);
      const int copies = images * fl.images;
      if (images > 1) {
        for (LinkId& l : links) {
          l = topo.fold_link(l);
          if (addend[l] == 0) addend[l] = fl.bytes;
          if (addend[l] != fl.bytes) return std::nullopt;
        }
        double& t = total_addend[r.crosses_nodes ? 1 : 0];
        if (t == 0) t = fl.bytes;
        if (t != fl.bytes) return std::nullopt;
      }
      if (stats)
        for (int k = 0; k < copies; ++k) {
          (r.crosses_nodes ? stats->inter_node_bytes : stats->intra_node_bytes) += fl.bytes;
          ++stats->flows;
        }
      for (int k = 0; k < fl.images; ++k)
        for (LinkId l : links) {
          if (load[l] == 0) touched.push_back(l);
          load[l] += fl.bytes;
        }
    }
    LinkLoads::Phase p;
    p.latency_s = phase.latency_s;
    p.wire = phase.wire;
    for (LinkId l : touched) {
      by_group.add(l, topo.link(l).cls, load[l], p.loads);
      load[l] = 0;
      if (images > 1) addend[l] = 0;
    }
    by_group.reset(p.loads);
    touched.clear();
    out.push_back(std::move(p));
  }
  return out;
}

double single_phase(const std::vector<PhaseLoads>& loads, bool network_only) {
  double t = 0;
  for (const PhaseLoads& p : loads)
    t += network_only ? p.cls[static_cast<std::size_t>(LinkClass::Network)] : p.all;
  return t;
}

ClassLoads class_sum(const std::vector<PhaseLoads>& loads) {
  ClassLoads c{};
  for (const PhaseLoads& p : loads)
    for (std::size_t k = 0; k < kLinkClasses; ++k) c[k] += p.cls[k];
  return c;
}

// The loads of unit's pattern: folded where fold allows it and the folded sums add equal values
// only, else from every flow.
std::vector<LinkLoads::Phase> pattern_loads(const CollectiveOp& unit, const Topology& topo,
                                            const CostProfile& profile,
                                            const std::vector<int>& groups, TrafficPattern pattern,
                                            NetStats* stats, bool fold) {
  if (fold && topo.rotation_blocks() > 1 && rotation_invariant(unit.groups, topo)) {
    const NetStats before = stats ? *stats : NetStats{};
    auto folded =
        phase_loads(lower_pattern(unit, topo, profile, pattern, topo.rotation_block_gpus()), topo,
                    groups, stats, topo.rotation_blocks());
    if (folded) return std::move(*folded);
    if (stats) *stats = before;
  }
  return *phase_loads(lower_pattern(unit, topo, profile, pattern), topo, groups, stats);
}

}  // namespace

UnitPlan unit_plan(const LinkLoads& loads, const std::vector<double>& capacity) {
  UnitPlan out;
  out.stats_per_byte = loads.stats_per_byte;
  const std::vector<PhaseLoads> ring = reduce_phases(loads.ring, capacity);
  for (const PhaseLoads& p : ring) out.phases.push_back({p.latency_s, p.all, p.cls});
  out.ring_class = class_sum(ring);
  if (!loads.nccl) return out;
  out.nccl = true;
  out.shape = loads.shape;
  out.pattern_s_per_byte[static_cast<std::size_t>(TrafficPattern::Ring)] =
      single_phase(ring, false);
  if (loads.has_nvls) {
    const std::vector<PhaseLoads> nvls_loads = reduce_phases(loads.nvls, capacity);
    const double nvls = single_phase(nvls_loads, false);
    out.nvls_class = class_sum(nvls_loads);
    out.pattern_s_per_byte[static_cast<std::size_t>(TrafficPattern::Nvls)] = nvls;
    out.pattern_s_per_byte[static_cast<std::size_t>(TrafficPattern::NvlsTree)] =
        std::max(nvls, single_phase(ring, true));
  }
  return out;
}

LinkLoads link_loads_by_flows(const CollectiveOp& op, const Topology& topo,
                              const CostProfile& profile, bool fold,
                              const std::vector<int>* groups) {
  const std::vector<int> own = groups ? std::vector<int>{} : capacity_groups(topo);
  const std::vector<int>& g = groups ? *groups : own;
  CollectiveOp unit = op;
  unit.bytes = 1;
  LinkLoads out;
  out.ring = pattern_loads(unit, topo, profile, g, TrafficPattern::Ring, &out.stats_per_byte, fold);
  if (!is_nccl_collective(op)) return out;
  out.nccl = true;
  out.shape = comm_shape(op, topo);
  if (op.kind == CollKind::AllReduce && out.shape.ppn > 1 && profile.nccl.nvls) {
    // NVLS inside every node: the groups' members node by node.
    CollectiveOp nodes = unit;
    std::vector<std::vector<int>> per_node;
    for (const auto& g : op.groups)
      for (auto& m : members_by_node(g, topo)) per_node.push_back(std::move(m));
    nodes.groups = GroupList(std::move(per_node));
    nodes.algorithm = Algorithm::IntraNode;
    out.has_nvls = true;
    out.nvls = pattern_loads(nodes, topo, profile, g, TrafficPattern::Nvls, nullptr, fold);
  }
  return out;
}

UnitPlan unit_plan_by_flows(const CollectiveOp& op, const Topology& topo,
                            const CostProfile& profile, const std::vector<double>& capacity,
                            bool fold) {
  return unit_plan(link_loads_by_flows(op, topo, profile, fold), capacity);
}

double UnitPlan::nccl_time_s(const CollectiveOp& op, const CostProfile& profile) const {
  const NcclChoice c = nccl_choice(op, profile);
  return c.time_s(op.bytes, pattern_s_per_byte[static_cast<std::size_t>(c.pattern)],
                  busbw_factor(op.kind, shape.ranks));
}

NcclChoice UnitPlan::nccl_choice(const CollectiveOp& op, const CostProfile& profile) const {
  return nccl_choose(
      nccl_candidates(shape, profile, op.bytes, op.nccl_algo, op.nccl_proto,
                      op.label.empty() ? "<collective>" : "<collective " + op.label + ">"),
      op.bytes, pattern_s_per_byte, busbw_factor(op.kind, shape.ranks));
}

namespace {

// The builders' fabric seen per GPU: its NIC link pair, its NIC's leaf link pair, its leaf, and
// the leaves' spine links in the router's candidate order (out-edge order = link id order).
struct RailFabric {
  std::vector<LinkId> gpu_up, gpu_down, nic_up, nic_down;  // per GPU index
  std::vector<int> leaf;                                   // per GPU index: dense leaf index
  int leaves = 0, spines = 0;
  std::vector<LinkId> up, down;  // [leaf * spines + k]: k-th uplink of leaf, and its way back
};

NodeKind kind_of(const Topology& t, int v) { return t.vertex(v).kind; }

// Latency per (from kind, to kind) must be uniform, so all routes of one shape are equally long.
bool uniform_latencies(const Topology& t) {
  std::map<std::pair<NodeKind, NodeKind>, double> latency;
  for (const LinkInfo& l : t.links()) {
    const auto [it, fresh] =
        latency.emplace(std::pair{kind_of(t, l.from), kind_of(t, l.to)}, l.latency_s);
    if (!fresh && it->second != l.latency_s) return false;
  }
  return true;
}

// The leaf and spine switches, each numbered densely in vertex order (index -1: no such switch).
struct Switches {
  std::vector<int> leaf_index, spine_index;  // per vertex
  std::vector<int> leaves, spines;           // vertices
};

// None where the graph is no rail fabric: a PCIe switch, or an NVSwitch with a way out of its
// node.
std::optional<Switches> find_switches(const Topology& t,
                                      const std::vector<std::vector<LinkId>>& out) {
  const int V = t.vertex_count();
  Switches sw;
  sw.leaf_index.assign(static_cast<std::size_t>(V), -1);
  sw.spine_index.assign(static_cast<std::size_t>(V), -1);
  for (int v = 0; v < V; ++v) {
    switch (kind_of(t, v)) {
      case NodeKind::PcieSwitch:
        return std::nullopt;
      case NodeKind::NvSwitch:  // joins GPUs of its node only: never a way out of the node
        for (LinkId id : out[v])
          if (kind_of(t, t.link(id).to) != NodeKind::Gpu ||
              t.vertex(t.link(id).to).node != t.vertex(v).node)
            return std::nullopt;
        break;
      case NodeKind::LeafSwitch:
        sw.leaf_index[v] = static_cast<int>(sw.leaves.size());
        sw.leaves.push_back(v);
        break;
      case NodeKind::SpineSwitch:
        sw.spine_index[v] = static_cast<int>(sw.spines.size());
        sw.spines.push_back(v);
        break;
      default:
        break;
    }
  }
  return sw;
}

// f.up and f.down: every leaf has one uplink to each spine (NIC links aside), every spine one link
// to each leaf. False where that does not hold.
bool spine_links(const Topology& t, const std::vector<std::vector<LinkId>>& out, const Switches& sw,
                 RailFabric& f) {
  const std::vector<int>& leaves = sw.leaves;
  const std::size_t S = sw.spines.size();
  f.up.assign(leaves.size() * S, -1);
  f.down.assign(leaves.size() * S, -1);
  for (std::size_t li = 0; li < leaves.size(); ++li) {
    std::size_t k = 0;
    for (LinkId id : out[leaves[li]]) {
      const int to = t.link(id).to;
      if (kind_of(t, to) == NodeKind::Nic) continue;
      if (kind_of(t, to) != NodeKind::SpineSwitch || k >= S) return false;
      f.up[li * S + k++] = id;
    }
    if (k != S) return false;
  }
  // down_at[spine * leaves + li]: the spine's one link to leaf li.
  std::vector<LinkId> down_at(S * leaves.size(), -1);
  for (std::size_t si = 0; si < S; ++si) {
    for (LinkId id : out[sw.spines[si]]) {
      const int li = sw.leaf_index[t.link(id).to];
      if (li < 0 || down_at[si * leaves.size() + static_cast<std::size_t>(li)] >= 0) return false;
      down_at[si * leaves.size() + static_cast<std::size_t>(li)] = id;
    }
    for (std::size_t li = 0; li < leaves.size(); ++li)
      if (down_at[si * leaves.size() + li] < 0) return false;
  }
  // down[li * S + k] = spine(up[li * S + k]) -> leaf li; every uplink's spine must be distinct.
  for (std::size_t li = 0; li < leaves.size(); ++li) {
    std::vector<char> used(S, 0);
    for (std::size_t k = 0; k < S; ++k) {
      const auto si = static_cast<std::size_t>(sw.spine_index[t.link(f.up[li * S + k]).to]);
      if (used[si]) return false;
      used[si] = 1;
      f.down[li * S + k] = down_at[si * leaves.size() + li];
    }
  }
  return true;
}

// Per GPU: the link pair to its one NIC, the NIC's link pair to its one leaf, and that leaf. False
// where a GPU has no NIC or several, or a NIC no leaf or several.
bool gpu_links(const Topology& t, const std::vector<std::vector<LinkId>>& out,
               const std::vector<int>& leaf_index, RailFabric& f) {
  const int W = t.gpu_count();
  f.gpu_up.assign(W, -1);
  f.gpu_down.assign(W, -1);
  f.nic_up.assign(W, -1);
  f.nic_down.assign(W, -1);
  f.leaf.assign(W, -1);
  for (int g = 0; g < W; ++g) {
    const int gv = t.gpu_vertex(g);
    int nic = -1;
    for (LinkId id : out[gv]) {
      const int to = t.link(id).to;
      if (kind_of(t, to) == NodeKind::NvSwitch) continue;
      if (kind_of(t, to) != NodeKind::Nic || nic >= 0) return false;
      nic = to;
      f.gpu_up[g] = id;
    }
    if (nic < 0) return false;
    int leaf = -1;
    for (LinkId id : out[nic]) {
      const int to = t.link(id).to;
      if (to == gv) {
        if (f.gpu_down[g] >= 0) return false;
        f.gpu_down[g] = id;
      } else if (leaf_index[to] >= 0) {
        if (leaf >= 0) return false;
        leaf = to;
        f.nic_up[g] = id;
      } else if (kind_of(t, to) != NodeKind::Gpu) {
        return false;
      }
    }
    if (leaf < 0 || f.gpu_down[g] < 0) return false;
    for (LinkId id : out[leaf])
      if (t.link(id).to == nic) {
        if (f.nic_down[g] >= 0) return false;
        f.nic_down[g] = id;
      }
    if (f.nic_down[g] < 0) return false;
    f.leaf[g] = leaf_index[leaf];
  }
  return true;
}

std::optional<RailFabric> rail_fabric(const Topology& t) {
  std::vector<std::vector<LinkId>> out(static_cast<std::size_t>(t.vertex_count()));
  for (LinkId id = 0; id < t.link_count(); ++id) out[t.link(id).from].push_back(id);
  if (!uniform_latencies(t)) return std::nullopt;
  const std::optional<Switches> sw = find_switches(t, out);
  if (!sw || (sw->leaves.size() > 1 && sw->spines.empty())) return std::nullopt;
  RailFabric f;
  f.leaves = static_cast<int>(sw->leaves.size());
  f.spines = static_cast<int>(sw->spines.size());
  if (!spine_links(t, out, *sw, f) || !gpu_links(t, out, sw->leaf_index, f)) return std::nullopt;
  return f;
}

// A group's members counted per leaf, per spine key (route_dest_key mod spines) and per both.
struct LeafKeyCounts {
  std::vector<std::uint32_t> per_leaf, per_key, per_leaf_key;  // per_leaf_key[leaf * spines + k]
};

LeafKeyCounts leaf_key_counts(const std::vector<int>& g, const Topology& topo,
                              const RailFabric& f) {
  const auto S = static_cast<std::size_t>(f.spines);
  LeafKeyCounts out;
  out.per_leaf.assign(static_cast<std::size_t>(f.leaves), 0);
  out.per_key.assign(S, 0);
  out.per_leaf_key.assign(static_cast<std::size_t>(f.leaves) * S, 0);
  for (int d : g) {
    const auto leaf = static_cast<std::size_t>(f.leaf[d]);
    ++out.per_leaf[leaf];
    if (S == 0) continue;  // one leaf: no spine
    const std::size_t k = route_dest_key(topo, d) % S;
    ++out.per_key[k];
    ++out.per_leaf_key[leaf * S + k];
  }
  return out;
}

// The first (s, d) pair of g in member order (s first, then d) with both on one leaf; {-1, -1}
// if none: s is the first member with another on its leaf, d that leaf's first other member.
std::pair<int, int> same_leaf_pair(const std::vector<int>& g, const RailFabric& f,
                                   const LeafKeyCounts& lk) {
  for (int s : g) {
    if (lk.per_leaf[static_cast<std::size_t>(f.leaf[s])] < 2) continue;
    for (int d : g)
      if (d != s && f.leaf[d] == f.leaf[s]) return {s, d};
  }
  return {-1, -1};
}

// The first (s, d) pair of g in member order with s and d on different leaves; {-1, -1} if none
// (g's first member has a partner on another leaf whenever any pair does).
std::pair<int, int> cross_leaf_pair(const std::vector<int>& g, const RailFabric& f) {
  for (int d : g)
    if (f.leaf[d] != f.leaf[g.front()]) return {g.front(), d};
  return {-1, -1};
}

// Groups of one GPU per node at one local index, no GPU in two groups.
bool rail_groups_only(const CollectiveOp& op, const Topology& topo) {
  std::vector<char> used(static_cast<std::size_t>(topo.gpu_count()), 0);
  for (const auto& g : op.groups)
    for (int r : g) {
      if (used[r] || topo.local_of(r) != topo.local_of(g.front())) return false;
      used[r] = 1;
    }
  return true;
}

}  // namespace

std::optional<LinkLoads> rail_all_to_all_loads(const CollectiveOp& op, const Topology& topo,
                                               const CostProfile& profile,
                                               const std::vector<int>* groups) {
  if (op.kind != CollKind::AllToAll) return std::nullopt;
  if (select_algorithm(op, topo) != Algorithm::Direct) return std::nullopt;  // validates op
  if (!rail_groups_only(op, topo)) return std::nullopt;
  const std::optional<RailFabric> fab = rail_fabric(topo);
  if (!fab) return std::nullopt;
  const RailFabric& f = *fab;
  const std::size_t S = static_cast<std::size_t>(f.spines);

  // Flow counts per link, per group size (each pair of a group of n carries 1/n per byte).
  std::map<std::size_t, std::vector<std::uint32_t>> counts;
  LinkLoads plan;
  double latency = 0;
  const auto n_links = static_cast<std::size_t>(topo.link_count());
  for (const auto& g : op.groups) {
    const std::size_t n = g.size();
    if (n < 2) continue;
    auto& c = counts[n];
    if (c.empty()) c.assign(n_links, 0);
    const auto others = static_cast<std::uint32_t>(n - 1);
    for (int s : g) {  // every flow leaves s's GPU and NIC and enters d's NIC and GPU
      c[f.gpu_up[s]] += others;
      c[f.nic_up[s]] += others;
      c[f.nic_down[s]] += others;
      c[f.gpu_down[s]] += others;
    }
    // Spine links by counting: the source leaf is the walk's first choice (one NIC per GPU, one
    // leaf per NIC) and the destination's D-mod-k key picks the spine, so leaf ls's uplink k
    // carries one flow per (s in ls, d outside ls with key k), and leaf ld's downlink k one per
    // (d in ld with key k, s outside ld): the integer counts of walking every pair, in
    // O(n + leaves x spines) instead of O(n^2).
    const LeafKeyCounts lk = leaf_key_counts(g, topo, f);
    const auto members = static_cast<std::uint32_t>(n);
    for (std::size_t leaf = 0; leaf < lk.per_leaf.size(); ++leaf) {
      const std::uint32_t on_leaf = lk.per_leaf[leaf];
      if (on_leaf == 0) continue;
      for (std::size_t k = 0; k < S; ++k) {
        const std::uint32_t here = lk.per_leaf_key[leaf * S + k];
        c[f.up[leaf * S + k]] += on_leaf * (lk.per_key[k] - here);
        c[f.down[leaf * S + k]] += here * (members - on_leaf);
      }
    }
    plan.stats_per_byte.inter_node_bytes += static_cast<double>(n - 1);  // n (n-1) pairs x 1/n
    plan.stats_per_byte.flows += n * (n - 1);
    // Every route of one shape has the same links' latencies: one pair of each shape is enough.
    double hop = 0;
    for (const auto& [a, b] : {same_leaf_pair(g, f, lk), cross_leaf_pair(g, f)})
      if (a >= 0) hop = std::max(hop, hop_latency_s(topo, profile, a, b));
    // Rail groups hold one GPU per node: every peer is across the network.
    latency = std::max(latency, nccl_p2p_latency(profile, hop, 0, static_cast<int>(n) - 1));
  }
  if (counts.empty()) return plan;  // no pairs: lower_collective makes no phase either
  std::vector<double> load(n_links, 0.0);
  for (const auto& [n, c] : counts)
    for (std::size_t l = 0; l < c.size(); ++l)
      if (c[l]) load[l] += c[l] / static_cast<double>(n);
  // One phase, each link's seconds per byte its load / capacity / p2p efficiency.
  LinkLoads::Phase& p = plan.ring.emplace_back();
  p.latency_s = latency;
  p.over = profile.nccl.p2p_efficiency;
  const std::vector<int> own = groups ? std::vector<int>{} : capacity_groups(topo);
  GroupMax by_group(groups ? *groups : own);
  for (std::size_t l = 0; l < load.size(); ++l)
    if (load[l] > 0) {
      const auto id = static_cast<LinkId>(l);
      by_group.add(id, topo.link(id).cls, load[l], p.loads);
    }
  return plan;
}

std::optional<UnitPlan> rail_all_to_all_plan(const CollectiveOp& op, const Topology& topo,
                                             const CostProfile& profile,
                                             const std::vector<double>& capacity) {
  if (auto loads = rail_all_to_all_loads(op, topo, profile)) return unit_plan(*loads, capacity);
  return std::nullopt;
}

LinkLoads link_loads(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                     const std::vector<int>* groups) {
  const std::vector<int> own = groups ? std::vector<int>{} : capacity_groups(topo);
  const std::vector<int>* g = groups ? groups : &own;
  if (auto p = rail_all_to_all_loads(op, topo, profile, g)) return std::move(*p);
  return link_loads_by_flows(op, topo, profile, true, g);
}

UnitPlan unit_plan(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                   const std::vector<double>& capacity) {
  return unit_plan(link_loads(op, topo, profile), capacity);
}

}  // namespace zerosim
