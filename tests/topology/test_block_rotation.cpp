// Block rotation (Topology::rotation_block_gpus): found exactly where the builders' clusters have
// full leaves and a spine choice that the rotation keeps; routes between rotated GPUs are the
// rotated routes (same links after folding to block 0, same latency). Where the servers break it,
// the fabric's own rotation (add_fabric_rotation) is recorded for the router only where it keeps
// the fabric's link costs.
#include <doctest/doctest.h>

#include "sim/topology/topology.hpp"
#include "sim/topology/topology_graph.hpp"
#include "tests/topology/cluster_spec.hpp"

using namespace zerosim;
using test::spec;

namespace {

// Every pair (a, b) with a in block 0, and its images one block on.
void check_equivariant(const Topology& t) {
  const int block = t.rotation_block_gpus(), n = t.gpu_count();
  REQUIRE(block > 0);
  for (int a = 0; a < block; a += 3)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const Route& r = t.route(a, b);  // unordered_map: stays valid as s is added
      const Route& s = t.route((a + block) % n, (b + block) % n);
      CAPTURE(a);
      CAPTURE(b);
      REQUIRE(s.links.size() == r.links.size());
      for (std::size_t k = 0; k < r.links.size(); ++k) {
        CHECK(t.fold_link(s.links[k]) == t.fold_link(r.links[k]));
        CHECK(t.link(s.links[k]).bandwidth_Bps == t.link(r.links[k]).bandwidth_Bps);
      }
      CHECK(s.latency_s == r.latency_s);
      CHECK(s.crosses_nodes == r.crosses_nodes);
    }
  // Folding is the identity on block 0's own links.
  for (int a = 1; a < block; ++a)
    for (LinkId id : t.route(0, a).links) CHECK(t.fold_link(id) == id);
}

}  // namespace

TEST_CASE("rail clusters of whole 32-node leaves rotate by a leaf's worth of servers") {
  Topology t = build_cluster(spec("dgx-h100", 64));  // 16 leaves, 16 spines
  CHECK(t.rotation_block_gpus() == 32 * 8);
  CHECK(t.rotation_blocks() == 2);
  check_equivariant(t);
  Topology big = build_cluster(spec("dgx-h100", 512));
  CHECK(big.rotation_blocks() == 16);
}

TEST_CASE("fat-trees rotate leaf by leaf, oversubscribed or not, on any node type") {
  Topology ft = build_cluster(spec("dgx-h100", 16, 8, "fat-tree", 2));  // 4 servers per leaf
  CHECK(ft.rotation_block_gpus() == 4 * 8);
  CHECK(ft.rotation_blocks() == 4);
  check_equivariant(ft);
  Topology v = build_cluster(spec("dgx2-v100", 16, 4, "fat-tree"));  // 8 servers per leaf
  CHECK(v.rotation_block_gpus() == 8 * 16);
  check_equivariant(v);
}

TEST_CASE("no rotation where it would change routes or where leaves differ") {
  // 96 rail nodes: 24 spines, and one block on moves NIC numbers by 32, so the spine changes.
  CHECK(build_cluster(spec("dgx-h100", 96)).rotation_block_gpus() == 0);
  // One leaf per rail: nothing to rotate. Partial last leaf: blocks differ.
  CHECK(build_cluster(spec("dgx-h100", 32)).rotation_block_gpus() == 0);
  CHECK(build_cluster(spec("dgx-h100", 10, 8, "fat-tree")).rotation_block_gpus() == 0);
  CHECK(build_cluster(spec("dgx-h100", 1, 8, "fat-tree")).rotation_block_gpus() == 0);
  CHECK(build_cluster(spec("dgx-h100", 1, 8, "fat-tree")).rotation_blocks() == 1);
}

namespace {

// Three one-GPU servers, each on its own leaf, the leaves on one spine; leaf 2's uplink has latency
// `leaf2_up_s` (the others 1 us). The layout moves leaf j to leaf j + 1 mod 3 (the spine stays).
int fabric_rotation_blocks(double leaf2_up_s) {
  TopologyBuilder b("three-leaves", "custom", "H100-SXM5-80GB", 1);
  std::vector<int> leaves;
  for (int n = 0; n < 3; ++n) {
    const std::string p = "n" + std::to_string(n);
    const int gpu = b.add_vertex(NodeKind::Gpu, p + ".gpu0", n, 0);
    const int nic = b.add_vertex(NodeKind::Nic, p + ".nic0", n, 0);
    b.add_link(gpu, nic, 50e9, 1e-6, LinkClass::Pcie, true);
    leaves.push_back(b.add_vertex(NodeKind::LeafSwitch, "leaf" + std::to_string(n), -1, -1));
    b.add_link(nic, leaves.back(), 50e9, 1e-6, LinkClass::Network, true);
  }
  const int spine = b.add_vertex(NodeKind::SpineSwitch, "spine", -1, -1);
  for (int n = 0; n < 3; ++n)
    b.add_link(leaves[n], spine, 50e9, n == 2 ? leaf2_up_s : 1e-6, LinkClass::Network, true);
  Topology t = b.finish();
  RotationLayout lay;
  lay.block_gpus = 1;
  lay.spines = 1;
  lay.block_of.assign(static_cast<std::size_t>(t.vertex_count()), -1);
  lay.rep_of.resize(static_cast<std::size_t>(t.vertex_count()));
  for (int v = 0; v < t.vertex_count(); ++v) lay.rep_of[v] = v;
  for (int n = 0; n < 3; ++n) {
    lay.block_of[leaves[n]] = n;
    lay.rep_of[leaves[n]] = leaves[0];
  }
  add_fabric_rotation(t, lay, 3);
  CHECK(t.rotation_blocks() == 1);  // the fabric's rotation folds nothing
  // Either way the router's routes are the plain Dijkstra's.
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c)
      if (a != c) CHECK(t.route(a, c).links == route_reference(t, a, c).links);
  return TopologyBuilder::graph(t).rotation_blocks;
}

}  // namespace

TEST_CASE("the fabric's rotation alone is recorded only where it keeps the fabric's link costs") {
  CHECK(fabric_rotation_blocks(1e-6) == 3);
  CHECK(fabric_rotation_blocks(2e-6) == 0);  // leaf 2's uplink costs more: not an automorphism
  // Partial leaf blocks (rail and fat-tree) and a rotation D-mod-k does not follow (96 rail nodes,
  // 24 spines): the servers do not rotate, the fabric does.
  for (const ClusterSpec& s :
       {spec("dgx-h100", 40), spec("dgx-h100", 96), spec("dgx-h100", 10, 8, "fat-tree")}) {
    CAPTURE(s.nodes);
    const Topology t = build_cluster(s);
    CHECK(t.rotation_blocks() == 1);
    CHECK(TopologyBuilder::graph(t).rotation_blocks ==
          (s.fabric == "rail" ? (s.nodes + 31) / 32 : (s.nodes + 3) / 4));
  }
}
