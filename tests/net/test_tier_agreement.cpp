// Flow and analytic tiers agree within 1% wherever no link is shared by different collectives: one
// collective at a time (its concurrent groups included), over kinds, algorithms, sizes and
// clusters.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/net/network_model.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {

Topology cluster(const std::string& type, int nodes) {
  ClusterSpec s;
  s.name = "agree";
  s.node_type = type;
  s.nodes = nodes;
  return build_cluster(s);
}

struct Case {
  CollKind kind;
  Algorithm algo;
};

void check_agreement(const std::string& type, int nodes, const std::vector<Case>& cases,
                     const std::vector<std::vector<int>>& groups) {
  const Topology topo = cluster(type, nodes);
  const CostProfile prof =
      load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/" + type + ".json");
  for (const Case& c : cases) {
    for (double bytes : {double(1 << 20), double(32 << 20), double(1 << 30)}) {
      CollectiveOp op;
      op.kind = c.kind;
      op.algorithm = c.algo;
      op.groups = groups.empty() ? world_group(topo) : groups;
      op.bytes = bytes;
      const double flow = collective_time(NetworkTier::Flow, op, topo, prof);
      const double analytic = collective_time(NetworkTier::Analytic, op, topo, prof);
      CAPTURE(type);
      CAPTURE(nodes);
      CAPTURE(to_string(c.kind));
      CAPTURE(to_string(c.algo));
      CAPTURE(bytes);
      CHECK(flow > 0);
      CHECK(flow == zerosim::testing::Approx(analytic).epsilon(0.01));
    }
  }
}

}  // namespace

TEST_CASE("one node: ring collectives and direct all-to-all") {
  const std::vector<Case> cases = {{CollKind::AllGather, Algorithm::Ring},
                                   {CollKind::ReduceScatter, Algorithm::Ring},
                                   {CollKind::AllReduce, Algorithm::Ring},
                                   {CollKind::AllToAll, Algorithm::Direct},
                                   {CollKind::AllGather, Algorithm::Auto}};
  check_agreement("dgx-h100", 1, cases, {});
  check_agreement("dgx2-v100", 1, cases, {});
}

TEST_CASE("several nodes: ring, hierarchical, direct and two-hop") {
  const std::vector<Case> cases = {{CollKind::AllGather, Algorithm::Ring},
                                   {CollKind::ReduceScatter, Algorithm::Ring},
                                   {CollKind::AllReduce, Algorithm::Ring},
                                   {CollKind::AllGather, Algorithm::Hierarchical},
                                   {CollKind::ReduceScatter, Algorithm::Hierarchical},
                                   {CollKind::AllReduce, Algorithm::Hierarchical},
                                   {CollKind::AllToAll, Algorithm::Direct},
                                   {CollKind::AllToAll, Algorithm::TwoHopAllToAll}};
  check_agreement("dgx-h100", 4, cases, {});
  check_agreement("dgx2-v100", 2, cases, {});
}

TEST_CASE("concurrent groups of one collective: per-node all-gathers and rail all-to-alls") {
  const Topology topo = cluster("dgx-h100", 4);
  check_agreement("dgx-h100", 4, {{CollKind::AllGather, Algorithm::IntraNode}},
                  intra_node_groups(topo, 8));
  check_agreement("dgx-h100", 4, {{CollKind::AllToAll, Algorithm::Direct}}, rail_groups(topo));
}
