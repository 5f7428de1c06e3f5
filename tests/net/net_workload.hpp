// Shared by the flow-tier equality tests: the collectives of a data-parallel ZeRO step on a
// cluster (hierarchical / intra-node / ring / rail / two-hop / direct), and the shipped profiles.
#pragma once
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::test {

inline CostProfile shipped_profile(const std::string& name) {
  return load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/" + name +
                           ".json");
}

inline std::vector<CollectiveOp> data_parallel_ops(const Topology& topo) {
  const int per_node = topo.gpus_per_node();
  return {
      {CollKind::AllGather, Algorithm::Hierarchical, world_group(topo), 64e6, "ag.hier"},
      {CollKind::AllGather, Algorithm::IntraNode, intra_node_groups(topo, per_node), 32e6,
       "ag.hpz"},
      {CollKind::ReduceScatter, Algorithm::Ring, world_group(topo), 48e6, "rs.ring"},
      {CollKind::AllReduce, Algorithm::Auto, rail_groups(topo), 8e6, "ar.rail"},
      {CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(topo), 16e6, "a2a.2hop"},
      {CollKind::AllToAll, Algorithm::Direct, intra_node_groups(topo, per_node), 4e6, "a2a.node"},
  };
}

}  // namespace zerosim::test
