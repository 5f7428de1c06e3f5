// Cluster selection flags shared by every subcommand that needs a cluster (topology, simulate,
// collective, plan): --cluster NAME|FILE plus builder overrides. Flag values are range-checked by
// the scenario schema's rules (exit 2 naming the flag); node-type limits (e.g. NICs per node) are
// checked by the builder.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "sim/topology/cluster_shape.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim::cli {

struct ClusterFlags {
  std::string cluster;         // preset name (topologies/<name>.json) or a path to a topology file
  ClusterOverrides overrides;  // 0 / empty = keep the preset's value
};

// Adds --cluster (required unless `required` is false) and --nodes, --nics-per-node, --nic-gbps,
// --fabric, --oversubscription to `app`, writing into `flags` (which must outlive parsing).
void add_cluster_flags(CLI::App* app, ClusterFlags& flags, bool required = true);

// Loads the selected cluster with its overrides applied (InputError on bad input).
Topology load_from(const ClusterFlags& flags);

// The selected cluster's shape, with load_from's checks: a builder preset's without building its
// graph (builder_shape), an explicit graph's once it is read.
ClusterShape shape_from(const ClusterFlags& flags);

}  // namespace zerosim::cli
