// The analytic tier's shortcuts (per-shape per-byte plans scaled by size, the rail all-to-all
// computed without flows) give the same collective times and byte counts as the full computation
// (every distinct op lowered with its bytes and every flow routed; analytic_shortcuts off) to
// 1e-9 relative: over DGX-2 rail clusters (one and several leaves per rail), 2:1 H100 fat-trees,
// odd node counts, explicit-graph topologies, every collective kind and algorithm, uneven and
// overlapping groups, and whole simulated steps.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../collectives/collectives_fixture.hpp"
#include "sim/core/error.hpp"
#include "sim/net/analytic_network.hpp"
#include "sim/step/simulate.hpp"
#include "sim/topology/topology_graph.hpp"
#include "tests/net/unit_plan_checks.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using test::make_op;

namespace {

// type, nodes, fabric, oversubscription, NICs per node (-1: the node type's).
Topology cluster(const std::string& type, int nodes, const std::string& fabric = "rail",
                 double oversub = 1, int nics = -1) {
  return test::dgx(type, nodes, nics, -1, fabric, oversub);
}

CostProfile profile_for(const Topology& topo) { return select_cost_profile("", topo); }

// Full and shortcut networks agree on op at several sizes (each size a fresh full computation).
void check_same(const Topology& topo, const CostProfile& prof, CollectiveOp op) {
  Engine e1, e2;
  AnalyticNetwork fast(e1, topo, prof, false), full(e2, topo, prof, true);
  for (double bytes : {3.0e5, 7.77e8, double(1ULL << 34)}) {
    op.bytes = bytes;
    const auto [tf, sf] = fast.op_cost(op);
    const auto [tr, sr] = full.op_cost(op);
    CAPTURE(topo.summary());
    CAPTURE(to_string(op.kind));
    CAPTURE(to_string(op.algorithm));
    CAPTURE(op.groups.size());
    CAPTURE(bytes);
    CHECK(tr >= 0);  // 0 only for groups of one GPU (no flows)
    CHECK(tf == zerosim::testing::Approx(tr).epsilon(1e-9));
    CHECK(sf.inter_node_bytes == zerosim::testing::Approx(sr.inter_node_bytes).epsilon(1e-9));
    CHECK(sf.intra_node_bytes == zerosim::testing::Approx(sr.intra_node_bytes).epsilon(1e-9));
    CHECK(sf.flows == sr.flows);
    const NetStats cs = collective_stats(op, topo, prof);
    CHECK(cs.inter_node_bytes == zerosim::testing::Approx(sr.inter_node_bytes).epsilon(1e-9));
    CHECK(cs.flows == sr.flows);
  }
}

bool shortcut_applies(const Topology& topo, const CostProfile& prof, const CollectiveOp& op) {
  return rail_all_to_all_plan(op, topo, prof, link_capacities(topo, prof)).has_value();
}

// Every kind and algorithm that applies to the cluster, on world, per-node and rail groups.
void check_all_kinds(const Topology& topo) {
  const CostProfile prof = profile_for(topo);
  const auto world = world_group(topo);
  const auto nodes = intra_node_groups(topo, topo.gpus_per_node());
  const auto rails = rail_groups(topo);
  const bool multi = topo.node_count() > 1;
  for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce}) {
    check_same(topo, prof, make_op(k, Algorithm::Auto, world, 1));
    check_same(topo, prof, make_op(k, Algorithm::Ring, world, 1));
    check_same(topo, prof, make_op(k, Algorithm::IntraNode, nodes, 1));
    if (multi) {
      check_same(topo, prof, make_op(k, Algorithm::Hierarchical, world, 1));
      check_same(topo, prof, make_op(k, Algorithm::Ring, rails, 1));
    }
  }
  check_same(topo, prof, make_op(CollKind::AllToAll, Algorithm::Direct, world, 1));
  check_same(topo, prof, make_op(CollKind::AllToAll, Algorithm::IntraNode, nodes, 1));
  const CollectiveOp rail_a2a = make_op(CollKind::AllToAll, Algorithm::Direct, rails, 1);
  check_same(topo, prof, rail_a2a);
  CHECK(shortcut_applies(topo, prof, rail_a2a));
  if (multi) {
    check_same(topo, prof, make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, world, 1));
    check_same(topo, prof, make_op(CollKind::AllToAll, Algorithm::Auto, rails, 1));
    // Uneven rail groups (sizes 3 and 2, sharing spine links) and one GPU's group.
    const int G = topo.gpus_per_node(), last = topo.gpu_count() - 1;
    std::vector<std::vector<int>> uneven = {{0, G}, {1, G + 1}};
    if (topo.node_count() > 2) uneven[0].push_back(last - last % G);
    if (G > 2) uneven.push_back({2});
    const CollectiveOp u = make_op(CollKind::AllToAll, Algorithm::Direct, uneven, 1);
    check_same(topo, prof, u);
    CHECK(shortcut_applies(topo, prof, u));
    // Overlapping groups and mixed local indices: not the shortcut's shape.
    const CollectiveOp overlap =
        make_op(CollKind::AllToAll, Algorithm::Direct, {{0, G}, {G, 0}}, 1);
    check_same(topo, prof, overlap);
    CHECK_FALSE(shortcut_applies(topo, prof, overlap));
    const CollectiveOp mixed = make_op(CollKind::AllToAll, Algorithm::Direct, {{0, G + 1}}, 1);
    check_same(topo, prof, mixed);
    CHECK_FALSE(shortcut_applies(topo, prof, mixed));
    std::vector<std::vector<int>> pairs;
    for (int n = 0; n + 1 < topo.node_count(); ++n) pairs.push_back({n * G, (n + 1) * G + 1});
    check_same(topo, prof, make_op(CollKind::SendRecv, Algorithm::Auto, pairs, 1));
  }
}

}  // namespace

TEST_CASE("DGX-2 rail-optimized: one leaf per rail, and several (spines, ECMP)") {
  check_all_kinds(cluster("dgx2-v100", 1, "rail", 1, 4));
  check_all_kinds(cluster("dgx2-v100", 3, "rail", 1, 4));
  check_all_kinds(cluster("dgx2-v100", 24, "rail", 1, 4));
  check_all_kinds(cluster("dgx2-v100", 37, "rail", 1, 8));  // 2 leaves per rail, odd count
}

TEST_CASE("DGX H100 fat-tree, 2:1 oversubscribed, and rail with spines") {
  check_all_kinds(cluster("dgx-h100", 2, "fat-tree", 2));
  check_all_kinds(cluster("dgx-h100", 7, "fat-tree", 2));
  check_all_kinds(cluster("dgx-h100", 48, "fat-tree", 2));
  check_all_kinds(cluster("dgx-h100", 2, "fat-tree", 2, 3));  // NICs shared unevenly
  check_all_kinds(cluster("dgx-h100", 67, "rail"));           // 3 leaves per rail
}

TEST_CASE("explicit graphs: the shortcut applies to a builder-shaped one, falls back otherwise") {
  const Topology ex =
      load_topology_file(std::string(ZEROSIM_SOURCE_DIR) + "/topologies/example-2x2-explicit.json");
  check_all_kinds(ex);

  // 4 servers x 2 GPUs, every GPU on both of its server's NICs (ECMP inside the server), NIC k on
  // leaf k, one spine: not the shortcut's shape (a GPU with two NICs).
  const auto path = std::filesystem::temp_directory_path() / "zerosim_shortcut_dual_nic.json";
  {
    std::ofstream f(path);
    f << R"({"name": "dual-nic", "node_type": "custom", "gpu_model": "V100-SXM3-32GB",
             "gpus_per_node": 2, "nodes": [)";
    for (int n = 0; n < 4; ++n) {
      for (int g = 0; g < 2; ++g)
        f << R"({"name": "n)" << n << ".gpu" << g << R"(", "kind": "gpu", "node": )" << n
          << R"(, "local": )" << g << "},";
      f << R"({"name": "n)" << n << R"(.sw", "kind": "nvswitch", "node": )" << n << "},";
      for (int k = 0; k < 2; ++k)
        f << R"({"name": "n)" << n << ".nic" << k << R"(", "kind": "nic", "node": )" << n
          << R"(, "local": )" << k << "},";
    }
    f << R"({"name": "leaf0", "kind": "leaf"}, {"name": "leaf1", "kind": "leaf"},
            {"name": "spine0", "kind": "spine"}], "links": [)";
    auto link = [&](const std::string& a, const std::string& b, const char* cls, double gbps,
                    bool comma = true) {
      f << R"({"from": ")" << a << R"(", "to": ")" << b << R"(", "gbps": )" << gbps
        << R"(, "latency_us": 0.5, "duplex": true, "class": ")" << cls << "\"}"
        << (comma ? "," : "");
    };
    for (int n = 0; n < 4; ++n) {
      const std::string p = "n" + std::to_string(n) + ".";
      for (int g = 0; g < 2; ++g) {
        link(p + "gpu" + std::to_string(g), p + "sw", "nvlink", 1200);
        for (int k = 0; k < 2; ++k)
          link(p + "gpu" + std::to_string(g), p + "nic" + std::to_string(k), "pcie", 126);
      }
      for (int k = 0; k < 2; ++k)
        link(p + "nic" + std::to_string(k), "leaf" + std::to_string(k), "network", 100);
    }
    link("leaf0", "spine0", "network", 400);
    link("leaf1", "spine0", "network", 400, false);
    f << "]}";
  }
  const Topology dual = load_topology_file(path.string());
  std::filesystem::remove(path);
  const CostProfile prof = profile_for(dual);
  const auto rails = rail_groups(dual);
  const CollectiveOp a2a = make_op(CollKind::AllToAll, Algorithm::Direct, rails, 1);
  CHECK_FALSE(shortcut_applies(dual, prof, a2a));
  check_same(dual, prof, a2a);
  check_same(dual, prof, make_op(CollKind::AllGather, Algorithm::Ring, world_group(dual), 1));
  check_same(dual, prof,
             make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(dual), 1));
}

TEST_CASE("bad sizes are still rejected with the lowering's message") {
  const Topology topo = cluster("dgx-h100", 2);
  const CostProfile prof = profile_for(topo);
  Engine e;
  AnalyticNetwork net(e, topo, prof, false);
  CollectiveOp op = make_op(CollKind::AllToAll, Algorithm::Direct, rail_groups(topo), -1);
  CHECK_THROWS_WITH_AS(net.op_cost(op), doctest::Contains("size must be positive"), InputError);
  op.bytes = 1;
  op.groups = {{0, 99}};
  CHECK_THROWS_WITH_AS(net.op_cost(op), doctest::Contains("outside the cluster"), InputError);
}

TEST_CASE("whole steps: same step time and bytes with and without the analytic shortcuts") {
  struct Case {
    const char* cluster;
    int nodes;
    const char* fabric;
    double oversub;
    const char* strategy;
  };
  for (const Case& c :
       {Case{"dgx2-v100", 5, "rail", 1, "zeropp"}, Case{"dgx2-v100", 40, "rail", 1, "zeropp"},
        Case{"dgx-h100", 48, "fat-tree", 2, "zeropp"}, Case{"dgx-h100", 9, "fat-tree", 2, "zero3"},
        Case{"dgx-h100", 3, "rail", 1, "zero3+qgz"}}) {
    Scenario s;
    s.cluster = c.cluster;
    s.nodes = c.nodes;
    s.fabric = c.fabric;
    s.oversubscription = c.oversub;
    s.model = "gpt-18b";
    s.strategy = c.strategy;
    s.tier = NetworkTier::Analytic;
    ReferenceModes no_shortcuts;
    no_shortcuts.network.analytic_shortcuts = false;
    SimContext plain(no_shortcuts);
    const StepResult full = simulate(s, plain);
    const StepResult fast = simulate(s);
    CAPTURE(c.cluster);
    CAPTURE(c.nodes);
    CHECK(fast.step_time_s == zerosim::testing::Approx(full.step_time_s).epsilon(1e-9));
    CHECK(fast.comm.inter_node_bytes ==
          zerosim::testing::Approx(full.comm.inter_node_bytes).epsilon(1e-9));
    CHECK(fast.comm.flows == full.comm.flows);
  }
}

TEST_CASE("a context's plans are shared by identical fabrics only; networks plan alike without") {
  const Topology a = cluster("dgx-h100", 6, "fat-tree", 2),
                 b = cluster("dgx-h100", 6, "fat-tree", 2);
  const Topology c = cluster("dgx-h100", 6, "fat-tree", 3);  // other uplink bandwidths
  const CostProfile prof = profile_for(a);
  CostProfile slower = prof;
  slower.link_classes[LinkClass::Network].efficiency *= 0.5;
  FabricPlanCache plans;
  CHECK(plans.get(a, prof) == plans.get(b, prof));
  CHECK(plans.get(a, prof) != plans.get(c, prof));
  CHECK(plans.get(a, prof) != plans.get(a, slower));
  // Found by builder key or by content, a fabric gets the same plans: a topology with a's graph but
  // no builder key (as an explicit graph would have) finds a's plans by content.
  Topology keyless = cluster("dgx-h100", 6, "fat-tree", 2);
  TopologyBuilder::set_builder_key(keyless, "");
  CHECK(keyless.builder_key().empty());
  CHECK(plans.get(keyless, prof) == plans.get(a, prof));
  CHECK(plans.get(keyless, slower) == plans.get(a, slower));
  // Each answer is the same in any order of calls (the last answer is kept by content).
  for (int round = 0; round < 2; ++round) {
    CHECK(plans.get(a, prof) == plans.get(b, prof));
    CHECK(plans.get(a, slower) != plans.get(a, prof));
    CHECK(plans.get(c, prof) != plans.get(a, prof));
  }
  CHECK(FabricPlanCache().get(a, prof) != plans.get(a, prof));  // caches share nothing
  // The plans' capacities are the fabric's.
  CHECK(plans.get(c, prof)->capacities(c, prof) == link_capacities(c, prof));
  CHECK(plans.get(c, slower)->capacities(c, slower) == link_capacities(c, slower));

  // The same op on two fabrics from four threads each, as a sweep runs them: each thread owns its
  // clusters and its plan cache (a Topology's route cache is thread-compatible, not thread-safe).
  // Every result equals the full one.
  const CollectiveOp op = make_op(CollKind::AllToAll, Algorithm::Direct, rail_groups(a), 1 << 26);
  std::vector<double> ref;
  for (const auto* t : {&a, &c}) {
    Engine e;
    ref.push_back(AnalyticNetwork(e, *t, prof, true).op_cost(op).first);
  }
  std::vector<double> got(8);
  std::vector<std::thread> pool;
  pool.reserve(8);
  for (int i = 0; i < 8; ++i)
    pool.emplace_back([&, i] {
      const Topology own = cluster("dgx-h100", 6, "fat-tree", i % 2 ? 3 : 2);
      FabricPlanCache own_plans;
      Engine e;
      got[i] = AnalyticNetwork(e, own, prof, false, own_plans.get(own, prof)).op_cost(op).first;
    });
  for (auto& t : pool) t.join();
  for (int i = 0; i < 8; ++i) CHECK(got[i] == zerosim::testing::Approx(ref[i % 2]).epsilon(1e-9));
}

namespace {

// unit_plan_by_flows folded (block 0's sources on the block-0 links) and unfolded: every number
// the same bits, wherever the fold applies and wherever it falls back.
void check_fold_exact(const Topology& topo, const CollectiveOp& op) {
  const CostProfile prof = profile_for(topo);
  const std::vector<double> cap = link_capacities(topo, prof);
  const UnitPlan full = unit_plan_by_flows(op, topo, prof, cap, false);
  const UnitPlan folded = unit_plan_by_flows(op, topo, prof, cap, true);
  CAPTURE(topo.summary());
  CAPTURE(to_string(op.kind));
  CAPTURE(to_string(op.algorithm));
  CAPTURE(op.groups.size());
  test::check_same_plan(full, folded);
}

}  // namespace

TEST_CASE("folded unit plans equal the unfolded ones bit for bit, or fall back to them") {
  // 4 and 8 blocks of a 2:1 fat-tree (4 nodes a leaf), and 12 nodes (3 leaf blocks, but D-mod-k's
  // spine choice does not follow a rotation of 3 blocks: no rotation, the plain computation).
  for (int nodes : {16, 32, 12}) {
    const Topology topo = cluster("dgx-h100", nodes, "fat-tree", 2);
    CAPTURE(nodes);
    CHECK(topo.rotation_blocks() == (nodes == 12 ? 1 : nodes / 4));
    const auto world = world_group(topo);
    const auto per_node = intra_node_groups(topo, topo.gpus_per_node());
    const auto rails = rail_groups(topo);
    for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce}) {
      check_fold_exact(topo, make_op(k, Algorithm::Ring, world, 1));
      check_fold_exact(topo, make_op(k, Algorithm::IntraNode, per_node, 1));
      check_fold_exact(topo, make_op(k, Algorithm::Hierarchical, world, 1));
    }
    // Rail all-to-all: a block-0 source's transfers into block 1 stand for their images.
    check_fold_exact(topo, make_op(CollKind::AllToAll, Algorithm::Direct, rails, 1));
    check_fold_exact(topo, make_op(CollKind::AllToAll, Algorithm::Direct, world, 1));
    check_fold_exact(topo, make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, world, 1));
    // Not rotation-invariant (a chain that does not wrap around): never folded.
    const int G = topo.gpus_per_node();
    std::vector<std::vector<int>> chain;
    for (int n = 0; n + 1 < topo.node_count(); ++n) chain.push_back({n * G, (n + 1) * G});
    check_fold_exact(topo, make_op(CollKind::SendRecv, Algorithm::Auto, chain, 1));
  }
  // 4 blocks of a rail fabric (32 nodes a leaf), the spines between them.
  const Topology rail = cluster("dgx-h100", 128, "rail");
  CHECK(rail.rotation_blocks() == 4);
  check_fold_exact(rail, make_op(CollKind::AllToAll, Algorithm::Direct, rail_groups(rail), 1));
  check_fold_exact(rail, make_op(CollKind::AllReduce, Algorithm::Ring, world_group(rail), 1));
}
