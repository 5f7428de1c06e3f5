// A cluster's shape: what a scenario's checks read of a cluster (its size and its GPU) before its
// graph is built, so that a scenario refused by them costs no topology.
#pragma once
#include <optional>
#include <string>

#include "sim/topology/topology.hpp"

namespace zerosim {

struct ClusterShape {
  std::string node_type, gpu_model;
  int nodes = 0, gpus_per_node = 0, gpu_count = 0;
};

ClusterShape shape_of(const Topology& t);

// The shape of a builder preset as load_cluster would build it, with every check load_cluster
// makes (the overrides, `max_gpus`, the builder's fields) but without building its graph; nullopt
// for an explicit graph, whose shape is known once it is read (load_cluster).
std::optional<ClusterShape> builder_shape(const std::string& name_or_file,
                                          const ClusterOverrides& overrides = {},
                                          FileCache* files = nullptr);

// Why a cluster of more than one block's worth of nodes carries no block rotation (folding.hpp:
// the symmetry by which the flow tier simulates one block of nodes for all): an explicit graph
// (none is looked for), or a builder cluster whose rotation does not preserve its routes or links
// (add_block_rotation). Empty when the cluster has a rotation or spans one block only.
std::string missing_rotation(const Topology& t);

// The nodes under one leaf switch's down ports: a rail fabric's leaf serves one NIC of each of
// kLeafDownPorts servers, a fat-tree's kLeafDownPorts NICs (at least one server). A builder
// cluster's block rotation moves whole leaf blocks, so it needs a whole number of them.
int leaf_block_nodes(const std::string& fabric, int nics_per_node);

}  // namespace zerosim
