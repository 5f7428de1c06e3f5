// Ring and direct-exchange emitters shared by the collective lowerings.
//
// Ring model (NCCL's pipelined ring): the buffer is cut into chunks that stream around the ring, so
// every ring edge is one long-lived flow for the whole operation carrying (n-1)/n of the buffer
// (all-reduce 2(n-1)/n). Its start-up latency is NCCL's (nccl_model.hpp).
//
// Across nodes, NCCL builds one ring per channel and uses as many channels as there are NICs, each
// channel entering and leaving every node through "its" NIC (NCCL_CROSS_NIC=0 with PXN). We model
// channel c as: in each node, a loop over NVLink that starts at the GPU owning NIC c, visits the
// node's other GPUs and comes back to the owner (the last hop is PXN's relay of the last GPU's data
// into the NIC owner), then one network flow from the owner to the same-rail GPU of the next node.
// Each channel carries 1/C of the bytes, so every NIC carries (n-1)/n*S/C and every GPU's NVLink
// carries (n-1)/n*S in each direction, as in NCCL.
#include "sim/collectives/lowering_detail.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "sim/collectives/nccl_model.hpp"

namespace zerosim::coll_detail {

namespace {

LinkClass hop_class_of(const Topology& topo, std::span<const LinkId> links, bool crosses_nodes) {
  if (crosses_nodes) return LinkClass::Network;
  LinkClass cls = LinkClass::NvLink;
  for (LinkId id : links)
    if (topo.link(id).cls != LinkClass::NvLink) cls = topo.link(id).cls;
  return cls;
}

Hop hop_of(const Topology& topo, const CostProfile& profile, std::span<const LinkId> links,
           const RouteInfo& r) {
  const LinkClass cls = hop_class_of(topo, links, r.crosses_nodes);
  return {cls, profile.link_class(cls).hop_latency_s + r.latency_s};
}

bool crosses_spine(const Topology& topo, std::span<const LinkId> links) {
  for (LinkId id : links)
    if (topo.vertex(topo.link(id).to).kind == NodeKind::SpineSwitch) return true;
  return false;
}

}  // namespace

Hop hop(const Topology& topo, const CostProfile& profile, int src, int dst) {
  const Route& r = topo.route(src, dst);
  return hop_of(topo, profile, r.links, {r.latency_s, r.crosses_nodes});
}

LinkClass hop_class(const Topology& topo, int src, int dst) {
  const Route& r = topo.route(src, dst);
  return hop_class_of(topo, r.links, r.crosses_nodes);
}

void PhaseBuilder::add_images(int src, int dst, double bytes, int images) {
  if (src >= source_limit_) return;
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
                            static_cast<std::uint32_t>(dst) | (images > 1 ? 1u << 31 : 0u);
  auto [it, fresh] = index_.try_emplace(key, flows_.size());
  if (!fresh) {
    flows_[it->second].bytes += bytes;
    return;
  }
  flows_.push_back(Flow{src, dst, bytes, images});
}

void PhaseBuilder::reserve_more(std::size_t more) {
  const std::size_t need = flows_.size() + more;
  if (need <= flows_.capacity()) return;
  const std::size_t room = std::max(need, 2 * flows_.capacity());
  flows_.reserve(room);
  index_.reserve(room);
}

Phase PhaseBuilder::take() {
  Phase p{latency_s_, std::move(flows_), true, wire_};
  flows_.clear();
  index_.clear();
  latency_s_ = 0;
  wire_ = 1;
  return p;
}

GroupLayout layout_of(const std::vector<int>& group, const Topology& topo) {
  GroupLayout lay;
  std::map<int, std::size_t> slot;
  for (int g : group) {
    const int node = topo.node_of(g);
    auto [it, fresh] = slot.emplace(node, lay.nodes.size());
    if (fresh) {
      lay.nodes.push_back(node);
      lay.members.emplace_back();
    }
    lay.members[it->second].push_back(g);
  }
  for (const auto& m : lay.members) {
    if (m.size() != lay.members[0].size()) {
      lay.regular = false;
      break;
    }
    for (std::size_t i = 0; i < m.size(); ++i)
      if (topo.local_of(m[i]) != topo.local_of(lay.members[0][i])) lay.regular = false;
  }
  return lay;
}

double ring_edge_fraction(CollKind kind, int n) {
  const double frac = static_cast<double>(n - 1) / n;
  return kind == CollKind::AllReduce ? 2 * frac : frac;
}

namespace {

// NIC index the route from src leaves its node through, or -1.
int exit_nic(const Topology& topo, int src, int dst) {
  for (LinkId id : topo.route(src, dst).links) {
    const VertexInfo& v = topo.vertex(topo.link(id).to);
    if (v.kind == NodeKind::Nic) return v.local;
  }
  return -1;
}

// Channel owners of a regular multi-node group: for every NIC used by some member, the position
// (within a node's member list) of the first member whose route to its same-rail peer in the next
// node leaves through that NIC. Ordered by NIC index.
std::vector<int> channel_owners(const GroupLayout& lay, const Topology& topo) {
  std::map<int, int> owner_of_nic;
  for (int p = 0; p < lay.per_node(); ++p) {
    const int nic = exit_nic(topo, lay.members[0][p], lay.members[1][p]);
    owner_of_nic.emplace(nic, p);  // keeps the first member per NIC
  }
  std::vector<int> owners;
  owners.reserve(owner_of_nic.size());
  for (const auto& [nic, p] : owner_of_nic) owners.push_back(p);
  return owners;
}

}  // namespace

void add_ring(PhaseBuilder& pb, CollKind kind, const std::vector<int>& group, double bytes,
              const Topology& topo) {
  const int n = static_cast<int>(group.size());
  if (n < 2) return;
  const double edge_bytes = ring_edge_fraction(kind, n) * bytes;
  const GroupLayout lay = layout_of(group, topo);
  const int nodes = static_cast<int>(lay.nodes.size());
  const int m = lay.per_node();

  if (nodes > 1 && lay.regular && m > 1) {
    const std::vector<int> owners = channel_owners(lay, topo);
    const double per_channel = edge_bytes / static_cast<double>(owners.size());
    for (int pos : owners) {
      for (int k = 0; k < nodes; ++k) {
        const auto& here = lay.members[static_cast<std::size_t>(k)];
        for (int j = 0; j < m;
             ++j)  // NVLink loop: owner, the others, back to the owner (PXN relay)
          pb.add(here[static_cast<std::size_t>((pos + j) % m)],
                 here[static_cast<std::size_t>((pos + j + 1) % m)], per_channel);
        const int src = here[static_cast<std::size_t>(pos)];
        const int dst =
            lay.members[static_cast<std::size_t>((k + 1) % nodes)][static_cast<std::size_t>(pos)];
        pb.add(src, dst, per_channel);
      }
    }
  } else {
    // One ring in node-major order (one node, one GPU per node, or nodes holding different GPUs).
    std::vector<int> order;
    for (const auto& members : lay.members)
      order.insert(order.end(), members.begin(), members.end());
    for (int i = 0; i < n; ++i) {
      const int src = order[static_cast<std::size_t>(i)];
      const int dst = order[static_cast<std::size_t>((i + 1) % n)];
      pb.add(src, dst, edge_bytes);
    }
  }
}

double TransferHops::latency_s(const CostProfile& profile) const {
  double s = 0;
  for (int k = 0; k < count; ++k) {
    const auto i = static_cast<std::size_t>(k);
    s += profile.link_class(cls[i]).hop_latency_s + route_latency_s[i];
  }
  return s;
}

TransferHops add_transfer_hops(PhaseBuilder& pb, int src, int dst, double bytes,
                               const Topology& topo, int images) {
  // Routed without caching the pair: a direct exchange has one transfer per pair of the group
  // (16.7M at 4096 GPUs), each looked at once here and once more by the flow tier's plan.
  // Scratch, not a cache: cleared before each use, kept per thread only for their capacity.
  thread_local std::vector<LinkId> direct, onward;
  direct.clear();
  const RouteInfo r = topo.route_into(src, dst, direct);
  if (topo.node_of(src) != topo.node_of(dst)) {
    const int relay = topo.node_of(src) * topo.gpus_per_node() + topo.local_of(dst);
    if (images > 1 && relay != src)
      throw std::logic_error("a transfer standing for several images must be one hop");
    if (relay != src && crosses_spine(topo, direct)) {
      onward.clear();
      const RouteInfo r2 = topo.route_into(relay, dst, onward);
      if (!crosses_spine(topo, onward)) {
        pb.add(src, relay, bytes);
        pb.add(relay, dst, bytes);
        const Route& first = topo.route(src, relay);
        return {2,
                {hop_class_of(topo, first.links, first.crosses_nodes),
                 hop_class_of(topo, onward, r2.crosses_nodes)},
                {first.latency_s, r2.latency_s}};
      }
    }
  }
  pb.add_images(src, dst, bytes, images);
  return {1, {hop_class_of(topo, direct, r.crosses_nodes), LinkClass::NvLink}, {r.latency_s, 0}};
}

double add_transfer(PhaseBuilder& pb, int src, int dst, double bytes, const Topology& topo,
                    const CostProfile& profile) {
  return add_transfer_hops(pb, src, dst, bytes, topo).latency_s(profile);
}

std::vector<std::pair<int, int>> peers_per_node(const std::vector<int>& group,
                                                const Topology& topo) {
  std::map<int, int> per_node;
  for (int r : group) ++per_node[topo.node_of(r)];
  std::vector<std::pair<int, int>> out;
  out.reserve(per_node.size());
  for (const auto& [node, count] : per_node)
    out.emplace_back(count - 1, static_cast<int>(group.size()) - count);
  return out;
}

std::pair<int, int> busiest_peers(const std::vector<std::pair<int, int>>& per_node,
                                  const CostProfile& profile) {
  std::pair<int, int> busiest{0, 0};
  double peers_cost = -1;
  for (const auto& [here, there] : per_node) {
    const double cost = here * profile.nccl.p2p_peer_s + there * profile.nccl.p2p_net_peer_s;
    if (cost > peers_cost) peers_cost = cost, busiest = {here, there};
  }
  return busiest;
}

namespace {

// Members per block when pb folds blocks of three or more and the group is folded_repeat's shape:
// one rail (every member the same local GPU, so no transfer takes PXN's relay) and, for m = the
// group's size / blocks, member c * m + i is member i + c x the block's GPUs, members [0, m) in
// block 0. 0 otherwise.
std::size_t folded_repeat(const PhaseBuilder& pb, const std::vector<int>& group,
                          const Topology& topo) {
  const int block = topo.rotation_block_gpus(), blocks = topo.rotation_blocks();
  if (block <= 0 || pb.source_limit() != block || blocks < 3) return 0;
  if (group.size() % static_cast<std::size_t>(blocks) != 0) return 0;
  const std::size_t m = group.size() / static_cast<std::size_t>(blocks);
  for (std::size_t i = 0; i < m; ++i)
    if (group[i] < 0 || group[i] >= block) return 0;
  const int local = topo.local_of(group[0]);
  for (std::size_t k = 0; k < group.size(); ++k)
    if (group[k] != group[k % m] + static_cast<int>(k / m) * block ||
        topo.local_of(group[k]) != local)
      return 0;
  return m;
}

}  // namespace

void add_direct_exchange(PhaseBuilder& pb, const std::vector<int>& group, double bytes_per_pair,
                         const Topology& topo, const CostProfile& profile) {
  double latency = 0;
  std::size_t sources = 0;
  for (int src : group) sources += src < pb.source_limit();
  const std::size_t m = folded_repeat(pb, group, topo);
  if (m > 0) {
    // Block 0's members send to blocks 0 and 1; a transfer into block 1 stands for its images.
    const int images = topo.rotation_blocks() - 1;
    pb.reserve_more(m * (2 * m - 1));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t k = 0; k < 2 * m; ++k)
        if (k != i)
          latency = std::max(latency, add_transfer_hops(pb, group[i], group[k], bytes_per_pair,
                                                        topo, k < m ? 1 : images)
                                          .latency_s(profile));
  } else {
    pb.reserve_more(sources * (group.size() - 1));
    for (int src : group)
      if (src < pb.source_limit())  // the others' pairs are dropped (and, by symmetry, no slower)
        for (int dst : group)
          if (src != dst)
            latency = std::max(latency, add_transfer(pb, src, dst, bytes_per_pair, topo, profile));
  }
  // Per-peer costs of the busiest rank: peers on its node and peers across the network.
  const auto [node_peers, net_peers] = busiest_peers(peers_per_node(group, topo), profile);
  pb.raise_latency(nccl_p2p_latency(profile, latency, node_peers, net_peers));
  pb.set_wire(1.0 / profile.nccl.p2p_efficiency);
}

}  // namespace zerosim::coll_detail

namespace zerosim {

// The public faces of hop() and layout_of() (collective.hpp).
double hop_latency_s(const Topology& topo, const CostProfile& profile, int src, int dst) {
  return coll_detail::hop(topo, profile, src, dst).latency_s;
}

std::vector<std::vector<int>> members_by_node(const std::vector<int>& group, const Topology& topo) {
  return coll_detail::layout_of(group, topo).members;
}

}  // namespace zerosim
