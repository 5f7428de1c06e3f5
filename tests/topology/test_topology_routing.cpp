// Router: the cached, decomposed router must return exactly the plain shortest-path answer (reverse
// Dijkstra over the whole graph); ECMP is deterministic and spreads over spines; scale.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "sim/topology/topology.hpp"
#include "sim/topology/topology_graph.hpp"

using namespace zerosim;

namespace {

ClusterSpec spec(const char* type, int nodes, int nics = -1, const char* fabric = "rail",
                 double over = 1) {
  ClusterSpec s;
  s.node_type = type;
  s.nodes = nodes;
  s.nics_per_node = nics;
  s.fabric = fabric;
  s.oversubscription = over;
  return s;
}

void check_same(const Topology& t, int s, int d) {
  const Route& fast = t.route(s, d);
  Route ref = route_reference(t, s, d);
  CAPTURE(s);
  CAPTURE(d);
  CHECK(fast.links == ref.links);
  CHECK(fast.latency_s == ref.latency_s);
  CHECK(fast.crosses_nodes == ref.crosses_nodes);
  CHECK(fast.crosses_nodes == (t.node_of(s) != t.node_of(d)));
}

}  // namespace

TEST_CASE("cached router equals plain Dijkstra on every pair of small clusters") {
  for (auto s : {spec("dgx2-v100", 3, 8), spec("dgx2-v100", 3, 3),
                 spec("dgx2-v100", 2, 1, "fat-tree"), spec("dgx-h100", 9, 8, "fat-tree", 2),
                 spec("dgx-a100", 1), spec("dgx-h200", 5, 4, "rail")}) {
    CAPTURE(s.node_type);
    CAPTURE(s.nodes);
    CAPTURE(s.fabric);
    Topology t = build_cluster(s);
    for (int a = 0; a < t.gpu_count(); ++a)
      for (int b = 0; b < t.gpu_count(); ++b)
        if (a != b) check_same(t, a, b);
  }
}

TEST_CASE("cached router equals plain Dijkstra across leaves (multi-leaf rails)") {
  Topology t =
      build_cluster(spec("dgx-h100", 70, 8, "rail"));  // 3 leaves per rail, 24 leaves, 24 spines
  for (int a = 0; a < t.gpu_count(); a += 7)
    for (int b = 3; b < t.gpu_count(); b += 13)
      if (a != b) check_same(t, a, b);
}

TEST_CASE(
    "routes on a graph that does not decompose (GPU on the fabric) use the full-Dijkstra "
    "fallback") {
  auto dir = std::filesystem::temp_directory_path() / "zerosim_test_topology_routing";
  std::filesystem::create_directories(dir);
  auto path = (dir / "gpu-on-leaf.json").string();
  // Two servers of two GPUs; GPU n0.gpu0 has its own fabric port (so it is a "border" GPU).
  std::ofstream(path) << R"({"gpu_model": "X", "gpus_per_node": 2,
    "nodes": [{"name": "a0", "kind": "gpu", "node": 0, "local": 0}, {"name": "a1", "kind": "gpu", "node": 0, "local": 1},
              {"name": "b0", "kind": "gpu", "node": 1, "local": 0}, {"name": "b1", "kind": "gpu", "node": 1, "local": 1},
              {"name": "sa", "kind": "nvswitch", "node": 0}, {"name": "nb", "kind": "nic", "node": 1},
              {"name": "leaf", "kind": "leaf"}, {"name": "leaf2", "kind": "leaf"}],
    "links": [{"from": "a0", "to": "sa", "GBps": 100, "latency_us": 0.3}, {"from": "a1", "to": "sa", "GBps": 100, "latency_us": 0.3},
              {"from": "a0", "to": "leaf", "gbps": 200, "latency_us": 0.5}, {"from": "a1", "to": "leaf2", "gbps": 200, "latency_us": 0.5},
              {"from": "b0", "to": "nb", "GBps": 30, "latency_us": 0.5}, {"from": "b1", "to": "nb", "GBps": 30, "latency_us": 0.5},
              {"from": "nb", "to": "leaf", "gbps": 200, "latency_us": 0.5}, {"from": "leaf", "to": "leaf2", "gbps": 400, "latency_us": 0.5}]})";
  Topology t = load_topology_file(path);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) check_same(t, a, b);
  CHECK(t.route(0, 2).links.size() == 3);  // a0 -> leaf -> nb -> b0
  CHECK(t.route(1, 2).links.size() == 4);  // a1 -> leaf2 -> leaf -> nb -> b0 (a0 is not transit)
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache returns the identical route object; routes are deterministic across builds") {
  Topology t1 = build_cluster(spec("dgx2-v100", 4, 8));
  Topology t2 = build_cluster(spec("dgx2-v100", 4, 8));
  for (int a = 0; a < t1.gpu_count(); a += 5)
    for (int b = 1; b < t1.gpu_count(); b += 3) {
      if (a == b) continue;
      const Route& first = t1.route(a, b);
      const Route& again = t1.route(a, b);
      CHECK(&first == &again);
      CHECK(t2.route(a, b).links == first.links);
    }
}

TEST_CASE("ECMP spreads cross-rail traffic over all spines, evenly within 2x") {
  Topology t = build_cluster(spec("dgx2-v100", 2, 8));  // 8 rail leaves -> 8 spines
  std::map<std::string, int> per_spine;
  int cross_rail = 0;
  for (int a = 0; a < 16; ++a)
    for (int b = 16; b < 32; ++b) {
      if (a / 2 == (b - 16) / 2) continue;  // same NIC index: same rail, no spine
      ++cross_rail;
      for (auto id : t.route(a, b).links)
        if (t.vertex(t.link(id).to).kind == NodeKind::SpineSwitch)
          ++per_spine[t.vertex(t.link(id).to).name];
    }
  CHECK(cross_rail == 16 * 14);
  REQUIRE(per_spine.size() == 8);
  int total = 0;
  for (const auto& [name, c] : per_spine) {
    total += c;
    CHECK(c <= 2 * cross_rail / 8);
    CHECK(c >= cross_rail / 8 / 2);
  }
  CHECK(total == cross_rail);  // exactly one spine per cross-rail route
}

// Speed is measured by the Google Benchmark suites (bench/), not asserted here.
TEST_CASE("scale: 4096 DGX-H100 nodes build and route like the plain search") {
  Topology t = build_cluster(spec("dgx-h100", 4096, 8, "rail"));
  CHECK(t.gpu_count() == 32768);
  // A ring over all GPUs plus a rail-aligned all-to-all-like pattern: 2 x 32768 routes.
  std::size_t hops = 0;
  for (int g = 0; g < t.gpu_count(); ++g) {
    hops += t.route(g, (g + 1) % t.gpu_count()).links.size();
    hops += t.route(g, (g + 8 * 517) % t.gpu_count()).links.size();
  }
  // Fabric fields are now warm: new pairs cost only the walk.
  for (int g = 0; g < t.gpu_count(); ++g)
    hops += t.route(g, (g + 8 * 1001 + 3) % t.gpu_count()).links.size();
  // 3 x 32768 routes, each leaving one GPU and entering another: at least 2 links each.
  CHECK(hops >= 2 * 3 * std::size_t{32768});
  for (int g : {0, 7, 8, 4095, 12345, 32767})
    for (int d : {1, 9, 255, 256, 20000, 32766})
      if (g != d) check_same(t, g, d);
}
