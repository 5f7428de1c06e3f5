// ClusterShape: a builder preset's shape without its graph equals the built cluster's, under every
// override; its checks are load_cluster's (same file, path and rule); an explicit graph has none
// before it is read. Past the unfolded GPU limit a builder cluster must be whole leaf blocks and an
// explicit graph is refused. missing_rotation says why a cluster of several leaf blocks does not
// fold.
#include <doctest/doctest.h>

#include <optional>

#include "sim/topology/cluster_shape.hpp"
#include "tests/support/files.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {
void same_shape(const std::string& cluster, const ClusterOverrides& o) {
  CAPTURE(cluster);
  CAPTURE(o.nodes);
  const std::optional<ClusterShape> s = builder_shape(cluster, o);
  REQUIRE(s);
  const ClusterShape built = shape_of(load_cluster(cluster, o));
  CHECK(s->node_type == built.node_type);
  CHECK(s->gpu_model == built.gpu_model);
  CHECK(s->nodes == built.nodes);
  CHECK(s->gpus_per_node == built.gpus_per_node);
  CHECK(s->gpu_count == built.gpu_count);
}
}  // namespace

TEST_CASE("a builder preset's shape is the built cluster's, under overrides") {
  same_shape("dgx-h100", {1, 0, 0, "", 0});
  same_shape("dgx2-v100", {2, 0, 0, "", 0});
  same_shape("dgx-a100", {3, 2, 100, "fat-tree", 2});
  same_shape("dgx-h100", {64, 4, 0, "", 0});
  same_shape("dgx2-v100-24n-rail", {});
  CHECK_FALSE(builder_shape("example-2x2-explicit").has_value());
}

TEST_CASE("the shape's checks are load_cluster's, before any graph") {
  const ClusterOverrides too_many_nics{2, 9, 0, "", 0};
  const InputError shaped = caught_input_error([&] { builder_shape("dgx-h100", too_many_nics); });
  const InputError built = caught_input_error([&] { load_cluster("dgx-h100", too_many_nics); });
  CHECK(shaped.file() == built.file());
  CHECK(shaped.path() == built.path());
  CHECK(shaped.rule() == built.rule());
  // The GPU limit: 1048576 GPUs refused by the shape as by the loader, naming --nodes.
  ClusterOverrides huge{131072, 0, 0, "", 0, 32768, "the flow tier"};
  expect_input_error([&] { builder_shape("dgx-h100", huge); }, "<command line>", "--nodes",
                     "the flow tier's limit of 32768");
  ClusterOverrides fabric{2, 0, 0, "torus", 0};
  expect_input_error([&] { builder_shape("dgx-h100", fabric); }, "<command line>", "--fabric",
                     "unknown fabric");
}

TEST_CASE(
    "past the unfolded limit a cluster must be whole leaf blocks; an explicit graph stays under "
    "it") {
  CHECK(leaf_block_nodes("rail", 8) == 32);      // one NIC of each of 32 servers a leaf
  CHECK(leaf_block_nodes("fat-tree", 8) == 4);   // 32 NICs a leaf, 8 a server
  CHECK(leaf_block_nodes("fat-tree", 64) == 1);  // at least one server
  // 48 rail nodes (384 GPUs) past an unfolded limit of 256: refused by the shape as by the
  // loader, naming the leaf block; 64 nodes (two whole blocks) are not, nor 48 under the limit.
  const ClusterOverrides partial{48, 0, 0, "", 0, 1 << 20, "the flow tier", 256};
  for (const bool shaped : {true, false}) {
    CAPTURE(shaped);
    expect_input_error(
        [&] {
          if (shaped)
            builder_shape("dgx-h100", partial);
          else
            load_cluster("dgx-h100", partial);
        },
        "<command line>", "--nodes",
        "48 nodes x 8 GPUs = 384 GPUs: above 256 GPUs the flow tier needs whole 32-node leaf "
        "blocks");
  }
  CHECK(builder_shape("dgx-h100", {64, 0, 0, "", 0, 1 << 20, "the flow tier", 256}));
  CHECK(builder_shape("dgx-h100", {48, 0, 0, "", 0, 1 << 20, "the flow tier", 384}));
  // A fat-tree's block is 4 DGX H100 nodes: 18 nodes are refused, 20 are not.
  expect_input_error(
      [&] {
        builder_shape("dgx-h100", {18, 0, 0, "fat-tree", 0, 1 << 20, "the flow tier", 64});
      },
      "<command line>", "--nodes", "18 is not a multiple of 4");
  CHECK(builder_shape("dgx-h100", {20, 0, 0, "fat-tree", 0, 1 << 20, "the flow tier", 64}));
  // An explicit graph has no rotation: the unfolded limit is its limit.
  const int gpus = shape_of(load_cluster("example-2x2-explicit")).gpu_count;
  const InputError e = caught_input_error([&] {
    load_cluster("example-2x2-explicit", {0, 0, 0, "", 0, 1 << 20, "the flow tier", gpus - 1});
  });
  CHECK(e.path() == "/nodes");
  CHECK(e.file().find("example-2x2-explicit") != std::string::npos);
  CHECK(e.rule().find("for a graph it cannot fold") != std::string::npos);
  CHECK(load_cluster("example-2x2-explicit", {0, 0, 0, "", 0, 1 << 20, "the flow tier", gpus})
            .gpu_count() == gpus);
}

TEST_CASE("missing_rotation: why a cluster of several leaf blocks carries no rotation") {
  // 64 rail nodes: two 32-node blocks, folded; 4 nodes: one block, nothing to fold.
  CHECK(missing_rotation(load_cluster("dgx-h100", {64, 0, 0, "", 0})).empty());
  CHECK(missing_rotation(load_cluster("dgx-h100", {4, 0, 0, "", 0})).empty());
  // Oversubscription keeps the fat-tree's rotation: 8 NICs a node, 4 nodes a 32-port leaf.
  const Topology os2 = load_cluster("dgx-h100", {64, 0, 0, "fat-tree", 2});
  CHECK(os2.rotation_blocks() == 16);
  CHECK(missing_rotation(os2).empty());
  CHECK(missing_rotation(load_cluster("dgx-h100", {48, 0, 0, "", 0})) ==
        "48 nodes are not a whole number of 32-node leaf blocks");
  CHECK(missing_rotation(load_cluster("example-2x2-explicit")) ==
        "an explicit graph carries no block rotation");
}
