// Block rotation (Topology::rotation_block_gpus): found exactly where the builders' clusters have
// full leaves and a spine choice that the rotation keeps; routes between rotated GPUs are the
// rotated routes (same links after folding to block 0, same latency).
#include <doctest/doctest.h>

#include "sim/topology/topology.hpp"
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
      const Route r = t.route(a, b);
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
