// shared_cluster: the per-thread memo of load_cluster. Same key -> the same object; other overrides
// or an edited file -> a new load (never stale); clusters above kSharedClusterMaxGpus are not kept;
// each thread has its own; errors are the loader's and are not cached.
#include <doctest/doctest.h>

#include <thread>

#include "sim/core/error.hpp"
#include "sim/topology/topology.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;

TEST_CASE("one cluster per key, per thread; big clusters are not kept") {
  const ClusterOverrides two{2, 0, 0, "", 0}, three{3, 0, 0, "", 0};
  auto a = shared_cluster("dgx-h100", two);
  CHECK(shared_cluster("dgx-h100", two) == a);
  auto b = shared_cluster("dgx-h100", three);
  CHECK(b != a);
  CHECK(b->gpu_count() == 24);
  CHECK(shared_cluster("dgx-h100", two) == a);  // still cached after another key
  const Topology fresh = load_cluster("dgx-h100", two);
  CHECK(a->link_count() == fresh.link_count());
  CHECK(a->summary() == fresh.summary());

  const int big_nodes = kSharedClusterMaxGpus / 8 + 1;  // DGX H100: 8 GPUs per node
  const ClusterOverrides big{big_nodes, 0, 0, "", 0};
  CHECK(shared_cluster("dgx-h100", big) != shared_cluster("dgx-h100", big));

  std::shared_ptr<const Topology> other;
  std::thread([&] { other = shared_cluster("dgx-h100", two); }).join();
  CHECK(other != a);  // another thread builds its own (route caches are not thread-safe)
  CHECK(other->summary() == a->summary());
}

TEST_CASE("an edited topology file is loaded again; a bad one is an input error every time") {
  const auto dir = temp_dir("shared_cluster");
  const auto file = (dir / "c.json").string();
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 2}})");
  auto a = shared_cluster(file);
  CHECK(a->node_count() == 2);
  CHECK(shared_cluster(file) == a);
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 3}})");
  auto b = shared_cluster(file);
  CHECK(b->node_count() == 3);
  spit(file, R"({"builder": {"node_type": "dgx-h100", "nodes": 0}})");
  CHECK_THROWS_AS(shared_cluster(file), InputError);
  CHECK_THROWS_AS(shared_cluster(file), InputError);
  std::filesystem::remove_all(dir);
}
