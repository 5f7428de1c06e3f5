// 'zerosim topology': builds or loads a cluster, prints its summary, optionally writes Graphviz
// DOT.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "sim/cli/cluster_flags.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"

namespace zerosim::cli {

void register_topology(CLI::App& app) {
  struct Args {
    ClusterFlags cluster;
    std::string dot;
  };
  auto args = std::make_shared<Args>();
  auto* sub =
      app.add_subcommand("topology", "show a cluster topology (summary; Graphviz DOT with --dot)");
  add_cluster_flags(sub, args->cluster);
  sub->add_option("--dot", args->dot, "write the graph as Graphviz DOT to this file (atomically)");
  sub->callback([args] {
    check_output_paths({data_input("--cluster", "topologies", args->cluster.cluster)},
                       {{"--dot", args->dot}});
    begin_work();
    Topology t = load_from(args->cluster);
    std::fputs(t.summary().c_str(), stdout);
    if (!args->dot.empty()) {
      write_file_atomic(args->dot, t.to_dot());
      std::printf("wrote %s\n", args->dot.c_str());
    }
  });
}

}  // namespace zerosim::cli
