// Shared by the topology tests: a builder ClusterSpec in one line.
#pragma once
#include "sim/topology/topology.hpp"

namespace zerosim::test {

inline ClusterSpec spec(const char* type, int nodes, int nics = -1, const char* fabric = "rail",
                        double over = 1) {
  ClusterSpec s;
  s.node_type = type;
  s.nodes = nodes;
  s.nics_per_node = nics;
  s.fabric = fabric;
  s.oversubscription = over;
  return s;
}

}  // namespace zerosim::test
