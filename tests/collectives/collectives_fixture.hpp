// Shared helpers for the collectives tests: small DGX clusters built through the public builder,
// the shipped cost profiles, collective ops, and byte accounting over a lowered plan.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim::test {

inline Topology dgx(const std::string& node_type, int nodes, int nics = -1, double nic_gbps = -1,
                    const std::string& fabric = "rail", double oversubscription = 1.0) {
  ClusterSpec s;
  s.name = node_type + "-test";
  s.node_type = node_type;
  s.nodes = nodes;
  s.nics_per_node = nics;
  s.nic_gbps = nic_gbps;
  s.fabric = fabric;
  s.oversubscription = oversubscription;
  return build_cluster(s);
}

inline CollectiveOp make_op(CollKind kind, Algorithm algo, std::vector<std::vector<int>> groups,
                            double bytes) {
  CollectiveOp op;
  op.kind = kind;
  op.algorithm = algo;
  op.groups = std::move(groups);
  op.bytes = bytes;
  return op;
}

inline CostProfile shipped_profile(const std::string& name) {
  return load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/" + name +
                           ".json");
}

struct ByteCount {
  double inter_node = 0, intra_node = 0;
  std::size_t flows = 0;
};

inline ByteCount count_bytes(const CollectivePlan& plan, const Topology& topo) {
  ByteCount c;
  for (const Phase& p : plan.phases)
    for (const Flow& f : p.flows) {
      ++c.flows;
      (topo.node_of(f.src_gpu) != topo.node_of(f.dst_gpu) ? c.inter_node : c.intra_node) += f.bytes;
    }
  return c;
}

// Per-hop latency of a point-to-point transfer src -> dst as the lowering prices it: the profile's
// alpha of the link class plus the route's wire latency (a ring's steps take NCCL's latency,
// ring_simple_latency, without the wire time).
inline double step_alpha(const Topology& topo, const CostProfile& prof, int src, int dst) {
  const Route& r = topo.route(src, dst);
  const LinkClass cls = r.crosses_nodes ? LinkClass::Network : LinkClass::NvLink;
  return prof.link_class(cls).hop_latency_s + r.latency_s;
}

// NCCL's Ring/Simple latency (nccl_model.hpp) with the 8.4 us baseLat every tuning table has for
// Ring/Simple: launch + base + (steps - network steps) NVLink hops + network steps x network hop.
// From NCCL 2.18 a multi-node ring's NVLink steps cost at least 3 x the host's network post
// overhead (Intel 1 us, AMD 2 us).
inline double ring_simple_latency(const CostProfile& p, CollKind kind, int n, int nodes) {
  const int mult = kind == CollKind::AllReduce ? 2 : 1;
  const int steps = mult * (n - 1), inter = nodes > 1 ? mult * (nodes - 1) : 0;
  double intra = p.link_class(LinkClass::NvLink).hop_latency_s;
  if (nodes > 1 && p.nccl.version_code >= 21800)
    intra = std::max(intra, 3 * (p.nccl.host_cpu == HostCpu::Amd ? 2e-6 : 1e-6));
  return p.nccl.launch_s + 8.4e-6 + (steps - inter) * intra +
         inter * p.link_class(LinkClass::Network).hop_latency_s;
}

// NCCL's grouped point-to-point latency: launch + base + the slowest hop + per-peer costs (peers
// on the node, peers across the network).
inline double p2p_latency(const CostProfile& p, double hop_s, int node_peers, int net_peers) {
  return p.nccl.launch_s + 8.4e-6 + hop_s + node_peers * p.nccl.p2p_peer_s +
         net_peers * p.nccl.p2p_net_peer_s;
}

// op forced to NCCL's ring with the Simple protocol (NCCL_ALGO=Ring NCCL_PROTO=Simple).
inline CollectiveOp ring_simple(CollectiveOp op) {
  op.nccl_algo = NcclAlgo::Ring;
  op.nccl_proto = NcclProto::Simple;
  return op;
}

}  // namespace zerosim::test
