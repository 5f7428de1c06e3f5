// ClusterCache: built clusters by content. Same key -> the same object; other overrides or an
// edited file -> a new load (never stale); clusters above kMaxGpus are not kept, and those kept
// stay within kPairBudget squared GPU counts; each cache (each context) has its own; errors are the
// loader's and are not cached.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/topology/cluster_cache.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;

TEST_CASE("one cluster per key, per cache; big clusters are not kept") {
  FileCache files;
  ClusterCache clusters;
  const ClusterOverrides two{2, 0, 0, "", 0}, three{3, 0, 0, "", 0};
  auto a = clusters.get("dgx-h100", two, files);
  CHECK(clusters.get("dgx-h100", two, files) == a);
  auto b = clusters.get("dgx-h100", three, files);
  CHECK(b != a);
  CHECK(b->gpu_count() == 24);
  CHECK(clusters.get("dgx-h100", two, files) == a);  // still cached after another key
  const Topology fresh = load_cluster("dgx-h100", two);
  CHECK(a->link_count() == fresh.link_count());
  CHECK(a->summary() == fresh.summary());

  const int big_nodes = ClusterCache::kMaxGpus / 8 + 1;  // DGX H100: 8 GPUs per node
  const ClusterOverrides big{big_nodes, 0, 0, "", 0};
  CHECK(clusters.get("dgx-h100", big, files) != clusters.get("dgx-h100", big, files));

  FileCache other_files;
  ClusterCache other;
  const auto mine = other.get("dgx-h100", two, other_files);
  CHECK(mine != a);  // another cache builds its own (route caches are not thread-safe)
  CHECK(mine->summary() == a->summary());
}

TEST_CASE("kept clusters stay within the pair budget: six of 384 GPUs, the oldest out first") {
  FileCache files;
  ClusterCache clusters;
  // 48 DGX H100 nodes = 384 GPUs: 384^2 x 6 <= kPairBudget < 384^2 x 7.
  static_assert(6 * 384 * 384 <= ClusterCache::kPairBudget);
  static_assert(7 * 384 * 384 > ClusterCache::kPairBudget);
  std::vector<std::shared_ptr<const Topology>> kept;
  for (int i = 0; i < 6; ++i)
    kept.push_back(clusters.get("dgx-h100", {48, 0, 100.0 * (1 << i), "", 0}, files));
  for (std::size_t i = 0; i < kept.size(); ++i)  // all six kept (each lookup refreshes it)
    CHECK(clusters.get("dgx-h100", {48, 0, 100.0 * (1 << i), "", 0}, files) == kept[i]);
  clusters.get("dgx-h100", {48, 0, 50, "", 0}, files);  // a seventh: the least recent (100) out
  CHECK(clusters.get("dgx-h100", {48, 0, 3200, "", 0}, files) == kept[5]);
  CHECK(clusters.get("dgx-h100", {48, 0, 100, "", 0}, files) != kept[0]);
}

TEST_CASE("an edited topology file is loaded again; a bad one is an input error every time") {
  const auto dir = temp_dir("cluster_cache");
  const auto file = (dir / "c.json").string();
  FileCache files;
  ClusterCache clusters;
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 2}})");
  auto a = clusters.get(file, {}, files);
  CHECK(a->node_count() == 2);
  CHECK(clusters.get(file, {}, files) == a);
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 3}})");
  auto b = clusters.get(file, {}, files);
  CHECK(b->node_count() == 3);
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 0}})");
  CHECK_THROWS_AS(clusters.get(file, {}, files), InputError);
  CHECK_THROWS_AS(clusters.get(file, {}, files), InputError);
  std::filesystem::remove_all(dir);
}
