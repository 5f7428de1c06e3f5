#include "sim/cli/cluster_flags.hpp"

#include "sim/cli/validators.hpp"

namespace zerosim::cli {

void add_cluster_flags(CLI::App* app, ClusterFlags& flags, bool required) {
  add_scenario_option(app, scenario_param("--cluster"), flags.cluster)->required(required);
  auto& o = flags.overrides;
  add_scenario_option(app, scenario_param("--nodes"), o.nodes);
  add_scenario_option(app, scenario_param("--nics-per-node"), o.nics_per_node);
  add_scenario_option(app, scenario_param("--nic-gbps"), o.nic_gbps);
  add_scenario_option(app, scenario_param("--fabric"), o.fabric);
  add_scenario_option(app, scenario_param("--oversubscription"), o.oversubscription);
}

Topology load_from(const ClusterFlags& flags) {
  return load_cluster(flags.cluster, flags.overrides);
}

ClusterShape shape_from(const ClusterFlags& flags) {
  if (std::optional<ClusterShape> shape = builder_shape(flags.cluster, flags.overrides))
    return *shape;
  return shape_of(load_from(flags));
}

}  // namespace zerosim::cli
