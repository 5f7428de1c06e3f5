// Validation, algorithm selection and lowering of a CollectiveOp into phases of flows.
//
// Algorithms (bytes S in nccl-tests' convention, n ranks, N per node, Y nodes):
//  - Ring / IntraNode (AG, RS, AR): one phase, the pipelined ring of lowering_detail.cpp.
//  - Hierarchical: the network only ever carries what a ring would, split in stages over rails
//    (the GPUs with the same local index across nodes):
//      all_gather:     rails all-gather S/N (each rank's shard from every node), then the node
//                      all-gathers S;
//      reduce_scatter: the node reduce-scatters S (each GPU keeps its rail's 1/N), then rails
//                      reduce-scatter S/N;
//      all_reduce:     node reduce-scatter S, rail all-reduce S/N, node all-gather S.
//  - Direct (all_to_all): one phase, every ordered pair gets S/n.
//  - TwoHopAllToAll (qgZ): hop 1 is an all-to-all among the node's N GPUs (each pair S/N, i.e. each
//    GPU sends (N-1)/N of its buffer over NVLink); qgZ reduces what it received, so hop 2 is an
//    all-to-all of S/N among the Y same-local-index GPUs (each pair S/(N*Y): each GPU sends
//    (1/N)(Y-1)/Y of its buffer over the network) -- 1/N of a direct all-to-all's network bytes.
//  - SendRecv: groups are [src, dst] pairs, one transfer of S each.
//  Point-to-point transfers between nodes use PXN's rail relay where the direct route would cross
//  rails (see add_transfer).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/lowering_detail.hpp"
#include "sim/collectives/nccl_model.hpp"
#include "sim/core/error.hpp"

namespace zerosim {
namespace {

using coll_detail::GroupLayout;
using coll_detail::layout_of;
using coll_detail::PhaseBuilder;

std::string where(const CollectiveOp& op) {
  return op.label.empty() ? "<collective>" : "<collective " + op.label + ">";
}

void validate(const CollectiveOp& op, const Topology& topo) {
  if (!(op.bytes > 0) || !std::isfinite(op.bytes))
    throw InputError(where(op), "/bytes", fmt::format("size must be positive, got {}", op.bytes));
  if (op.groups.empty()) throw InputError(where(op), "/groups", "needs at least one group");
  // One mark per GPU, set by a group's members and cleared after it (groups of 131072 ranks are
  // checked per distinct op: no set and no path text per member).
  std::vector<char> seen(static_cast<std::size_t>(topo.gpu_count()), 0);
  for (std::size_t i = 0; i < op.groups.size(); ++i) {
    const auto& g = op.groups[i];
    if (g.empty()) throw InputError(where(op), fmt::format("/groups/{}", i), "group is empty");
    for (std::size_t j = 0; j < g.size(); ++j) {
      if (g[j] < 0 || g[j] >= topo.gpu_count())
        throw InputError(
            where(op), fmt::format("/groups/{}/{}", i, j),
            fmt::format("rank {} is outside the cluster's GPUs 0..{}", g[j], topo.gpu_count() - 1));
      char& mark = seen[static_cast<std::size_t>(g[j])];
      if (mark)
        throw InputError(where(op), fmt::format("/groups/{}/{}", i, j),
                         fmt::format("rank {} appears twice in the group", g[j]));
      mark = 1;
    }
    for (int r : g) seen[static_cast<std::size_t>(r)] = 0;
    if (op.kind == CollKind::SendRecv && g.size() != 2)
      throw InputError(
          where(op), fmt::format("/groups/{}", i),
          fmt::format("send_recv groups are [src, dst] pairs, got {} ranks", g.size()));
  }
}

bool within_one_node(const std::vector<int>& g, const Topology& topo) {
  for (int r : g)
    if (topo.node_of(r) != topo.node_of(g.front())) return false;
  return true;
}

bool all_within_nodes(const CollectiveOp& op, const Topology& topo) {
  for (const auto& g : op.groups)
    if (!within_one_node(g, topo)) return false;
  return true;
}

[[noreturn]] void unsupported(const CollectiveOp& op, Algorithm a, const std::string& why) {
  throw InputError(
      where(op), "/algorithm",
      fmt::format("algorithm '{}' cannot run {}: {}", to_string(a), to_string(op.kind), why));
}

GroupLayout regular_layout(const CollectiveOp& op, const std::vector<int>& g,
                           const Topology& topo) {
  GroupLayout lay = layout_of(g, topo);
  if (!lay.regular)
    unsupported(op, op.algorithm,
                "every node of the group must hold the same local GPU indices in the same order");
  return lay;
}

// Rails of a regular layout: position p in every node.
std::vector<std::vector<int>> rails_of(const GroupLayout& lay) {
  std::vector<std::vector<int>> rails(static_cast<std::size_t>(lay.per_node()));
  for (const auto& members : lay.members)
    for (std::size_t p = 0; p < members.size(); ++p) rails[p].push_back(members[p]);
  return rails;
}

// A stage of a hierarchical collective: a ring of `kind` over either the nodes' or the rails'
// groups.
struct Stage {
  CollKind kind;
  bool rails;
  bool rail_share;  // true: the stage moves S/N (one rail's share), false: S
};

CollectivePlan lower_hierarchical(const CollectiveOp& op, const Topology& topo,
                                  const CostProfile& profile, int source_limit) {
  std::vector<Stage> stages;
  switch (op.kind) {
    case CollKind::AllGather:
      stages = {{CollKind::AllGather, true, true}, {CollKind::AllGather, false, false}};
      break;
    case CollKind::ReduceScatter:
      stages = {{CollKind::ReduceScatter, false, false}, {CollKind::ReduceScatter, true, true}};
      break;
    case CollKind::AllReduce:
      stages = {{CollKind::ReduceScatter, false, false},
                {CollKind::AllReduce, true, true},
                {CollKind::AllGather, false, false}};
      break;
    default:
      unsupported(op, Algorithm::Hierarchical,
                  "it applies to all_gather, reduce_scatter, all_reduce");
  }
  std::vector<GroupLayout> layouts;
  for (const auto& g : op.groups) layouts.push_back(regular_layout(op, g, topo));
  CollectivePlan plan;
  for (const Stage& st : stages) {
    PhaseBuilder pb(source_limit);
    for (const GroupLayout& lay : layouts) {
      const double bytes = st.rail_share ? op.bytes / lay.per_node() : op.bytes;
      const auto sub = st.rails ? rails_of(lay) : lay.members;
      for (const auto& g : sub) {
        coll_detail::add_ring(pb, st.kind, g, bytes, topo);
        if (g.size() < 2) continue;
        // Each stage is one NCCL ring call (Simple: the stages move rail or node shares of the
        // buffer); its latency does not depend on the size, so plans stay linear in bytes.
        CommShape sh;
        sh.kind = st.kind;
        sh.ranks = static_cast<int>(g.size());
        sh.nodes = st.rails ? sh.ranks : 1;
        sh.ppn = st.rails ? 1 : sh.ranks;
        sh.intra = coll_detail::hop_class(topo, g[0], g[1]);
        sh.type_inter = topo.nccl_type_inter();
        pb.raise_latency(
            nccl_candidates(sh, profile, 0, NcclAlgo::Ring, NcclProto::Simple, where(op))[0]
                .latency_s);
      }
    }
    if (!pb.empty()) plan.phases.push_back(pb.take());
  }
  return plan;
}

CollectivePlan lower_two_hop(const CollectiveOp& op, const Topology& topo,
                             const CostProfile& profile, int source_limit) {
  PhaseBuilder hop1(source_limit), hop2(source_limit);
  for (const auto& g : op.groups) {
    const GroupLayout lay = regular_layout(op, g, topo);
    const double per_node = lay.per_node();
    const double nodes = static_cast<double>(lay.nodes.size());
    for (const auto& members : lay.members)
      coll_detail::add_direct_exchange(hop1, members, op.bytes / per_node, topo, profile);
    for (const auto& rail : rails_of(lay))
      coll_detail::add_direct_exchange(hop2, rail, op.bytes / (per_node * nodes), topo, profile);
  }
  CollectivePlan plan;
  if (!hop1.empty()) plan.phases.push_back(hop1.take());
  if (!hop2.empty()) plan.phases.push_back(hop2.take());
  return plan;
}

}  // namespace

Algorithm select_algorithm(const CollectiveOp& op, const Topology& topo) {
  validate(op, topo);
  const bool intra = all_within_nodes(op, topo);
  const bool is_reduction_ring = op.kind == CollKind::AllGather ||
                                 op.kind == CollKind::ReduceScatter ||
                                 op.kind == CollKind::AllReduce;
  Algorithm a = op.algorithm;
  if (op.kind == CollKind::SendRecv) {
    if (a != Algorithm::Auto && a != Algorithm::Direct)
      unsupported(op, a, "send_recv is a direct transfer (use auto or direct)");
    return Algorithm::Direct;
  }
  if (a == Algorithm::Auto)
    return intra ? Algorithm::IntraNode : (is_reduction_ring ? Algorithm::Ring : Algorithm::Direct);
  if (a == Algorithm::IntraNode && !intra) unsupported(op, a, "a group spans more than one node");
  if (is_reduction_ring && (a == Algorithm::Direct || a == Algorithm::TwoHopAllToAll))
    unsupported(op, a, "it is an all_to_all algorithm");
  if (op.kind == CollKind::AllToAll && (a == Algorithm::Ring || a == Algorithm::Hierarchical))
    unsupported(op, a, "use direct, two_hop or intra_node for all_to_all");
  return a;
}

std::uint64_t max_phase_flows(const CollectiveOp& op, const Topology& topo) {
  const Algorithm a = select_algorithm(op, topo);
  auto pairs = [](std::uint64_t n) { return n * (n > 0 ? n - 1 : 0); };
  std::uint64_t flows = 0, hop2 = 0;
  for (const auto& g : op.groups) {
    const auto n = static_cast<std::uint64_t>(g.size());
    if (a == Algorithm::TwoHopAllToAll) {
      const GroupLayout lay = layout_of(g, topo);
      const auto per_node = static_cast<std::uint64_t>(lay.per_node());
      const auto nodes = static_cast<std::uint64_t>(lay.nodes.size());
      flows += nodes * pairs(per_node);
      hop2 += per_node * pairs(nodes);
    } else if (op.kind == CollKind::AllToAll) {
      flows += pairs(n);
    } else {
      flows += op.kind == CollKind::SendRecv ? 1 : a == Algorithm::Hierarchical ? 2 * n : n;
    }
  }
  return std::max(flows, hop2);
}

CollectivePlan lower_pattern(const CollectiveOp& op, const Topology& topo,
                             const CostProfile& profile, TrafficPattern pattern, int source_limit) {
  const Algorithm a = select_algorithm(op, topo);
  if (pattern == TrafficPattern::Nvls && !all_within_nodes(op, topo))
    unsupported(op, a, "NVLS exchanges run inside one node");
  if (a == Algorithm::Hierarchical) return lower_hierarchical(op, topo, profile, source_limit);
  if (a == Algorithm::TwoHopAllToAll) return lower_two_hop(op, topo, profile, source_limit);
  PhaseBuilder pb(source_limit);
  for (const auto& g : op.groups) {
    if (op.kind == CollKind::SendRecv) {
      const bool remote = topo.node_of(g[0]) != topo.node_of(g[1]);
      pb.raise_latency(nccl_p2p_latency(
          profile, coll_detail::add_transfer(pb, g[0], g[1], op.bytes, topo, profile),
          remote ? 0 : 1, remote ? 1 : 0));
      pb.set_wire(1.0 / profile.nccl.p2p_efficiency);
    } else if (op.kind == CollKind::AllToAll) {
      coll_detail::add_direct_exchange(pb, g, op.bytes / static_cast<double>(g.size()), topo,
                                       profile);
    } else if (pattern == TrafficPattern::Nvls) {
      // NVLink SHARP: every GPU sends its buffer once into the switch and receives the result
      // once: a direct exchange of S/(n-1) per pair carries that load on every NVLink.
      const auto n = static_cast<double>(g.size());
      for (int src : g)
        for (int dst : g)
          if (src != dst) pb.add(src, dst, op.bytes / (n - 1));
    } else {
      coll_detail::add_ring(pb, op.kind, g, op.bytes, topo);
    }
  }
  CollectivePlan plan;
  if (!pb.empty()) plan.phases.push_back(pb.take());
  return plan;
}

}  // namespace zerosim

namespace zerosim {

CollectivePlan lower_collective(const CollectiveOp& op, const Topology& topo,
                                const CostProfile& profile, int source_limit) {
  if (!is_nccl_collective(op))
    return lower_pattern(op, topo, profile, TrafficPattern::Ring, source_limit);
  // NCCL's choice needs each pattern's link-limited time, which only the network tiers price; a
  // plan lowered here carries the ring's flows and NCCL's Ring/Simple latency at op's size. The
  // tiers apply the full choice (nccl_model.hpp).
  select_algorithm(op, topo);
  CollectivePlan plan = lower_pattern(op, topo, profile, TrafficPattern::Ring, source_limit);
  const double lat = nccl_candidates(comm_shape(op, topo), profile, op.bytes, NcclAlgo::Ring,
                                     NcclProto::Simple, where(op))[0]
                         .latency_s;
  if (!plan.phases.empty()) plan.phases[0].latency_s += lat;
  return plan;
}

}  // namespace zerosim
