#include "sim/cli/cluster_flags.hpp"

#include "sim/cli/validators.hpp"

namespace zerosim::cli {

void add_cluster_flags(CLI::App* app, ClusterFlags& flags, bool required) {
  auto* c =
      app->add_option("--cluster", flags.cluster,
                      "cluster preset (topologies/<name>.json, e.g. dgx-h100) or topology file");
  if (required) c->required();
  auto& o = flags.overrides;
  app->add_option("--nodes", o.nodes, "number of server nodes (builder presets only)")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--nics-per-node", o.nics_per_node,
                  "network adapters per node, 1..the node type's maximum (builder presets only)")
      ->check(CLI::Range(1, 64));
  app->add_option("--nic-gbps", o.nic_gbps, "line rate per NIC in Gbit/s (builder presets only)")
      ->check(finite_range(1e-3, 1e6));
  app->add_option("--fabric", o.fabric, "network fabric: rail (rail-optimized) or fat-tree")
      ->check(CLI::IsMember({"rail", "fat-tree"}));
  app->add_option("--oversubscription", o.oversubscription,
                  "leaf downlink:uplink bandwidth ratio, >= 1 (builder presets only)")
      ->check(finite_range(1.0, 1e6));
}

Topology load_from(const ClusterFlags& flags) {
  return load_cluster(flags.cluster, flags.overrides);
}

}  // namespace zerosim::cli
