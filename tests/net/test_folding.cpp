// Folding (folding.hpp): on clusters with a block rotation, running only block 0's flows on the
// block-0 images of their links must give the same completion times as the unfolded flow tier
// (within 1e-9 relative, as every shortcut), collective by collective with overlapping
// collectives and for whole ZeRO-3 / ZeRO++ steps; rotation_invariant accepts exactly the group
// lists the rotation maps onto themselves; an op that breaks the symmetry turns folding off.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/net/flow_network.hpp"
#include "sim/net/folding.hpp"
#include "sim/step/simulate.hpp"
#include "tests/net/net_workload.hpp"

using namespace zerosim;

namespace {

Topology cluster(const std::string& type, int nodes, const std::string& fabric, int nics = -1) {
  ClusterSpec s;
  s.node_type = type;
  s.nodes = nodes;
  s.nics_per_node = nics;
  if (type == "dgx2-v100") s.nic_gbps = 100;
  s.fabric = fabric;
  s.oversubscription = fabric == "fat-tree" ? 2 : 1;
  return build_cluster(s);
}

// Incast that only folded links see whole: GPU 0 of block k receives from node 1 of block k - 1
// and node 2 of block k - 2, so its NIC is the bottleneck and takes flows from two source blocks.
CollectiveOp incast(const Topology& topo) {
  const int block = topo.rotation_block_gpus(), n = topo.gpu_count(), per_node = 8;
  std::vector<std::vector<int>> pairs;
  for (int b = 0; b < n / block; ++b) {
    pairs.push_back({b * block + per_node, ((b + 1) * block) % n});
    pairs.push_back({b * block + 2 * per_node, ((b + 2) * block) % n});
  }
  return {CollKind::SendRecv, Algorithm::Auto, pairs, 8e6, "incast"};
}

std::vector<CollectiveOp> workload(const Topology& topo) {
  std::vector<CollectiveOp> ops = test::data_parallel_ops(topo);
  if (topo.rotation_blocks() >= 3) ops.push_back(incast(topo));
  ops.push_back({CollKind::AllToAll, Algorithm::Direct, world_group(topo), 32e6, "a2a.world"});
  ops.push_back({CollKind::AllGather, Algorithm::Ring, world_group(topo), 24e6, "ag.ring"});
  const std::size_t distinct = ops.size();
  for (std::size_t i = 0; i < distinct; ++i) ops.push_back(ops[i]);  // repeats hit the cache
  return ops;
}

struct Run {
  std::vector<double> done;
  NetStats stats;
  int blocks = 0;
};

// Starts op i at time i * 40 us, so that collectives overlap and contend.
// leave_at > 0: the folded flows in flight then move to the real (block-0 and spine) links.
Run run(const Topology& topo, const CostProfile& prof, const std::vector<CollectiveOp>& ops,
        bool fold, double leave_at = 0) {
  Engine e;
  FlowNetwork net(e, topo, prof);
  net.set_folding(fold);
  e.add_model(&net);
  if (leave_at > 0) e.schedule_at(leave_at, [&] { net.leave_symmetry(); });
  net.expect_ops(ops);
  Run r;
  r.done.assign(ops.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i)
    e.schedule_at(40e-6 * static_cast<double>(i),
                  [&, i] { net.start(ops[i], [&, i] { r.done[i] = e.now(); }); });
  e.run();
  r.stats = net.stats();
  r.blocks = net.fold_blocks();
  return r;
}

void check_same_times(const Run& ref, const Run& fast) {
  REQUIRE(ref.done.size() == fast.done.size());
  for (std::size_t i = 0; i < ref.done.size(); ++i) {
    CAPTURE(i);
    REQUIRE(ref.done[i] > 0);
    CHECK(std::abs(fast.done[i] - ref.done[i]) <= 1e-9 * ref.done[i]);
  }
  CHECK(std::abs(fast.stats.inter_node_bytes - ref.stats.inter_node_bytes) <=
        1e-12 * ref.stats.inter_node_bytes);
  CHECK(std::abs(fast.stats.intra_node_bytes - ref.stats.intra_node_bytes) <=
        1e-12 * ref.stats.intra_node_bytes);
}

std::vector<int> shifted(std::vector<int> g, int by, int n) {
  for (int& x : g) x = (x + by) % n;
  return g;
}

}  // namespace

TEST_CASE("rotation_invariant: the step's group lists are, broken or partial ones are not") {
  const Topology t = cluster("dgx-h100", 16, "fat-tree");  // 4 blocks of 4 servers
  REQUIRE(t.rotation_block_gpus() == 32);
  const int n = t.gpu_count();
  CHECK(rotation_invariant(world_group(t), t));
  CHECK(rotation_invariant(intra_node_groups(t, 8), t));
  CHECK(rotation_invariant(rail_groups(t), t));
  // The world in node-major order, started at another node: the same cyclic sequence.
  std::vector<int> world = world_group(t)[0];
  CHECK(rotation_invariant(GroupList{shifted(world, 8, n)}, t));
  // ... but not cut inside a node (a ring over it has other edges).
  CHECK_FALSE(rotation_invariant(GroupList{shifted(world, 3, n)}, t));
  // One block's nodes only, or all nodes but one.
  CHECK_FALSE(
      rotation_invariant(GroupList{std::vector<int>(world.begin(), world.begin() + 32)}, t));
  CHECK_FALSE(rotation_invariant(GroupList{std::vector<int>(world.begin(), world.end() - 8)}, t));
  // Every block's first node: its image is itself, element for element after the cut.
  std::vector<int> firsts;
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 8; ++i) firsts.push_back(b * 32 + i);
  CHECK(rotation_invariant(GroupList{firsts}, t));
  // A node's GPUs interleaved with the next node's: cut between nodes, but nodes not together.
  std::vector<int> mixed;
  for (int k = 0; k < n / 2; ++k) {
    mixed.push_back(k);
    mixed.push_back(k + n / 2);
  }
  CHECK_FALSE(rotation_invariant(GroupList{mixed}, t));
  // No rotation on this cluster (partial leaf): nothing is invariant.
  const Topology partial = cluster("dgx-h100", 6, "fat-tree");
  CHECK_FALSE(rotation_invariant(world_group(partial), partial));
}

TEST_CASE("folding matches the unfolded flow tier, collective by collective") {
  struct Case {
    const char* type;
    int nodes;
    const char* fabric;
    int nics;
    int blocks;
  };
  const Case cases[] = {
      {"dgx-h100", 64, "rail", -1, 2},      // two leaves per rail, 16 spines
      {"dgx-h100", 16, "fat-tree", -1, 4},  // 2:1, four servers per leaf
      {"dgx2-v100", 16, "fat-tree", 4, 2},  // 2:1, eight servers per leaf, 4 NICs each
  };
  for (const Case& c : cases) {
    CAPTURE(c.type);
    CAPTURE(c.nodes);
    CAPTURE(c.fabric);
    const Topology topo = cluster(c.type, c.nodes, c.fabric, c.nics);
    const CostProfile prof = test::shipped_profile(c.type);
    const std::vector<CollectiveOp> ops = workload(topo);
    const Run ref = run(topo, prof, ops, false), fast = run(topo, prof, ops, true);
    CHECK(ref.blocks == 1);
    CHECK(fast.blocks == c.blocks);
    check_same_times(ref, fast);
    check_same_times(ref, run(topo, prof, ops, true, 130e-6));  // several collectives in flight
    // Flows count the full model's: each of block 0's for its images in every block.
    CHECK(fast.stats.flows <= ref.stats.flows + 64);
    // The world all-to-all alone: block 0's pairs exactly, each standing for c.blocks.
    const std::vector<CollectiveOp> a2a = {ops[ops.size() / 2 - 2]};
    REQUIRE(a2a[0].label == "a2a.world");
    const Run r1 = run(topo, prof, a2a, false), f1 = run(topo, prof, a2a, true);
    check_same_times(r1, f1);
    CHECK(f1.stats.flows == r1.stats.flows);
  }
}

TEST_CASE("folding: a link's load comes from flows of every source block") {
  const Topology topo = cluster("dgx-h100", 16, "fat-tree");
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const std::vector<CollectiveOp> ops = {incast(topo)};
  const Run ref = run(topo, prof, ops, false), fast = run(topo, prof, ops, true);
  CHECK(fast.blocks == 4);
  check_same_times(ref, fast);
  // Two flows share each receiving NIC: slower than one flow alone.
  const std::vector<CollectiveOp> one = {
      {CollKind::SendRecv, Algorithm::Auto, GroupList{{8, 32}}, 8e6, "alone"}};
  CHECK(ref.done[0] > 1.5 * run(topo, prof, one, false).done[0]);
}

TEST_CASE("an op the rotation does not map onto itself turns folding off") {
  const Topology topo = cluster("dgx-h100", 16, "fat-tree");
  const CostProfile prof = test::shipped_profile("dgx-h100");
  std::vector<CollectiveOp> ops = workload(topo);
  ops.push_back({CollKind::SendRecv, Algorithm::Auto, GroupList{{0, 8}}, 2e6, "p2p"});
  const Run ref = run(topo, prof, ops, false), fast = run(topo, prof, ops, true);
  CHECK(fast.blocks == 1);
  check_same_times(ref, fast);
  // Started while folding without being announced: a programming error, not a wrong answer.
  Engine e;
  FlowNetwork net(e, topo, prof);
  e.add_model(&net);
  net.expect_ops(std::span<const CollectiveOp>(ops.data(), 1));
  REQUIRE(net.fold_blocks() == 4);
  CHECK_THROWS_AS(net.start(ops.back(), [] {}), std::logic_error);
}

TEST_CASE("folding matches the unfolded flow tier: whole ZeRO-3 / ZeRO++ steps") {
  const test::StepCase cases[] = {
      {"dgx-h100", 64, "", "gpt-18b", "zeropp"},
      {"dgx-h100", 16, "fat-tree", "gpt-18b", "zero3"},
      {"dgx-h100", 16, "fat-tree", "gpt-18b", "zeropp"},
  };
  ReferenceModes no_folding;
  no_folding.network.flow_folding = false;
  for (const test::StepCase& c : cases) {
    CAPTURE(c.nodes);
    CAPTURE(c.fabric);
    CAPTURE(c.strategy);
    const auto [full, fast] = test::same_step_time(no_folding, c);
    CHECK(fast.comm.flows == full.comm.flows);  // a folded flow counts its images
  }
}
