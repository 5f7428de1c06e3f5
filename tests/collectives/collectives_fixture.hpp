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

// Per-hop latency of a step src -> dst as the lowering defines it: the profile's alpha of the link
// class plus the route's wire latency.
inline double step_alpha(const Topology& topo, const CostProfile& prof, int src, int dst) {
  const Route& r = topo.route(src, dst);
  const LinkClass cls = r.crosses_nodes ? LinkClass::Network : LinkClass::NvLink;
  return prof.link_class(cls).hop_latency_s + r.latency_s;
}

}  // namespace zerosim::test
