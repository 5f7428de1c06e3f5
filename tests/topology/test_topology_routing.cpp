// Router: the cached, decomposed router must return exactly the plain shortest-path answer (reverse
// Dijkstra over the whole graph); ECMP is deterministic and spreads over spines; scale.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "sim/topology/topology.hpp"
#include "sim/topology/topology_graph.hpp"
#include "tests/topology/cluster_spec.hpp"

using namespace zerosim;
using test::spec;

namespace {

void check_same(const Topology& t, int s, int d) {
  const Route& fast = t.route(s, d);
  Route ref = route_reference(t, s, d);
  CAPTURE(s);
  CAPTURE(d);
  CHECK(fast.links == ref.links);
  CHECK(fast.latency_s == ref.latency_s);
  CHECK(fast.crosses_nodes == ref.crosses_nodes);
  CHECK(fast.crosses_nodes == (t.node_of(s) != t.node_of(d)));
  // The uncached walk (plans of millions of pairs) appends the same links after what is there.
  std::vector<LinkId> into{-7};
  const RouteInfo info = t.route_into(s, d, into);
  REQUIRE(into.size() == ref.links.size() + 1);
  CHECK(into[0] == -7);
  CHECK(std::equal(ref.links.begin(), ref.links.end(), into.begin() + 1));
  CHECK(info.latency_s == ref.latency_s);
  CHECK(info.crosses_nodes == ref.crosses_nodes);
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

TEST_CASE("rotated distance fields: the router equals plain Dijkstra on clusters with a rotation") {
  // The fields of targets outside block 0 are their block-0 image's, read at rotated vertices
  // (TopologyGraph::rotation_blocks): every pair of a 2:1 fat-tree of 4 blocks, and every
  // destination from a spread of sources on a 2-NIC rail cluster of 2 blocks.
  Topology ft = build_cluster(spec("dgx-h100", 16, 8, "fat-tree", 2));
  REQUIRE(TopologyBuilder::graph(ft).rotation_blocks == ft.rotation_blocks());
  REQUIRE(ft.rotation_blocks() == 4);
  for (int a = 0; a < ft.gpu_count(); ++a)
    for (int b = 0; b < ft.gpu_count(); ++b)
      if (a != b) check_same(ft, a, b);
  Topology rail = build_cluster(spec("dgx-h100", 64, 2));
  REQUIRE(TopologyBuilder::graph(rail).rotation_blocks == 2);
  for (int a = 0; a < rail.gpu_count(); a += 37)
    for (int b = 0; b < rail.gpu_count(); ++b)
      if (a != b) check_same(rail, a, b);
}

TEST_CASE("partial leaf blocks: the fabric's rotation alone serves the distance fields") {
  // A partial last leaf breaks the block rotation (nothing folds: Topology::rotation_blocks() is
  // 1), but its uplinks differ from the others' in bandwidth only, and the router's costs are
  // latencies: rotating the leaves one block on (per rail) is still an automorphism of the fabric
  // with its costs (add_fabric_rotation), and the router computes fields for block-0 targets only.
  // Every pair of a 2:1 fat-tree of 4 full leaves and a partial one (18 nodes, 4 a leaf); every
  // destination from a spread of sources on 2-NIC rail clusters of 2 and 3 leaves per rail.
  Topology ft = build_cluster(spec("dgx-h100", 18, 8, "fat-tree", 2));
  CHECK(ft.rotation_blocks() == 1);
  REQUIRE(TopologyBuilder::graph(ft).rotation_blocks == 5);
  for (int a = 0; a < ft.gpu_count(); ++a)
    for (int b = 0; b < ft.gpu_count(); ++b)
      if (a != b) check_same(ft, a, b);
  for (int nodes : {40, 77}) {
    CAPTURE(nodes);
    Topology rail = build_cluster(spec("dgx-h100", nodes, 2));
    CHECK(rail.rotation_blocks() == 1);
    REQUIRE(TopologyBuilder::graph(rail).rotation_blocks == (nodes + 31) / 32);
    for (int a = 0; a < rail.gpu_count(); a += 29)
      for (int b = 0; b < rail.gpu_count(); ++b)
        if (a != b) check_same(rail, a, b);
  }
}

TEST_CASE("servers of different in-server shapes keep their own distance fields") {
  // Servers 0 and 2: GPUs on an NVSwitch and on a PCIe switch, each GPU wired to the NIC; server 1:
  // the same vertices, but its gpu1 is not on the NVSwitch, so its GPUs reach each other through
  // the PCIe switch. A distance field of server 0 would send server 1's traffic to a dead end.
  std::string nodes, links;
  auto vertex = [&](const std::string& name, const char* kind, int node, int local) {
    nodes += (nodes.empty() ? "" : ",") + std::string("{\"name\": \"") + name + "\", \"kind\": \"" +
             kind + "\", \"node\": " + std::to_string(node) +
             (local >= 0 ? ", \"local\": " + std::to_string(local) : std::string()) + "}";
  };
  auto link = [&](const std::string& a, const std::string& b, double gbps, double us,
                  const char* cls) {
    links += (links.empty() ? "" : ",") + std::string("{\"from\": \"") + a + "\", \"to\": \"" + b +
             "\", \"gbps\": " + std::to_string(gbps) + ", \"latency_us\": " + std::to_string(us) +
             ", \"duplex\": true, \"class\": \"" + cls + "\"}";
  };
  for (int n = 0; n < 3; ++n) {
    const std::string p = "n" + std::to_string(n) + ".";
    for (int g = 0; g < 2; ++g) vertex(p + "gpu" + std::to_string(g), "gpu", n, g);
    vertex(p + "nvswitch", "nvswitch", n, -1);
    vertex(p + "pcie", "pcie-switch", n, -1);
    vertex(p + "nic", "nic", n, 0);
    link(p + "gpu0", p + "nvswitch", 1200, 0.3, "nvlink");
    if (n != 1) link(p + "gpu1", p + "nvswitch", 1200, 0.3, "nvlink");
    link(p + "gpu0", p + "pcie", 126, 0.5, "pcie");
    link(p + "gpu1", p + "pcie", 126, 0.5, "pcie");
    link(p + "gpu0", p + "nic", 126, 0.5, "pcie");
    link(p + "gpu1", p + "nic", 126, 0.5, "pcie");
    link(p + "nic", "leaf0", 100, 0.5, "network");
  }
  vertex("leaf0", "leaf", -1, -1);
  const auto path = std::filesystem::temp_directory_path() / "zerosim_two_shapes.json";
  std::ofstream(path) << R"({"name": "two-shapes", "node_type": "custom", "gpu_model":
    "V100-SXM3-32GB", "gpus_per_node": 2, "nodes": [)"
                      << nodes << "], \"links\": [" << links << "]}";
  Topology t = load_topology_file(path.string());
  std::filesystem::remove(path);
  for (int a = 0; a < t.gpu_count(); ++a)
    for (int b = 0; b < t.gpu_count(); ++b)
      if (a != b) check_same(t, a, b);
}

TEST_CASE("from 1024 GPUs route suffixes sit in flat slots: same routes") {
  Topology t = build_cluster(spec("dgx-h100", 128, 8, "rail"));  // 1024 GPUs, 4 leaves per rail
  REQUIRE(t.gpu_count() >= static_cast<int>(SuffixTable::kMinFlatGpus));
  for (int a = 0; a < t.gpu_count(); a += 37)
    for (int b = 5; b < t.gpu_count(); b += 11)
      if (a != b) check_same(t, a, b);
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

namespace {

// The spine a route crosses ("" if none); at most one.
std::string spine_of(const Topology& t, const Route& r) {
  std::string name;
  for (auto id : r.links)
    if (t.vertex(t.link(id).to).kind == NodeKind::SpineSwitch) {
      CHECK(name.empty());
      name = t.vertex(t.link(id).to).name;
    }
  return name;
}

}  // namespace

TEST_CASE("ECMP is D-mod-k: the spine depends on the destination NIC only, spread evenly") {
  // 2 DGX-2 nodes, 8 rails of one leaf, 8 spines. NICs are numbered leaf by leaf: rail r's leaf
  // delivers to n0.nic r and n1.nic r, numbers 2r and 2r + 1; GPU local i is on NIC i / 2. A route
  // to NIC number q crosses spine q mod 8, from any source.
  Topology t = build_cluster(spec("dgx2-v100", 2, 8));
  std::map<std::string, int> per_spine;
  int cross_rail = 0;
  for (int a = 0; a < 32; ++a)
    for (int b = 0; b < 32; ++b) {
      const int na = a / 16, nb = b / 16, ra = (a % 16) / 2, rb = (b % 16) / 2;
      if (na == nb || ra == rb) continue;  // NVLink, or the rail's leaf: no spine
      ++cross_rail;
      const std::string s = spine_of(t, t.route(a, b));
      CAPTURE(a);
      CAPTURE(b);
      CHECK(s == "spine" + std::to_string((2 * rb + nb) % 8));
      ++per_spine[s];
    }
  CHECK(cross_rail == 2 * 16 * 14);
  // Each spine takes two destination NICs (numbers s and s + 8), 2 GPUs each, 14 sources each.
  REQUIRE(per_spine.size() == 8);
  for (const auto& [name, c] : per_spine) CHECK(c == 2 * 2 * 14);
}

TEST_CASE("D-mod-k on multi-leaf rails and fat-trees (hand-computed spines)") {
  // H100 rail, 70 nodes: 3 leaves per rail (32, 32, 6 nodes), 24 leaves, 24 spines. NIC r of node
  // n is number 70 r + n.
  Topology rail = build_cluster(spec("dgx-h100", 70, 8, "rail"));
  CHECK(spine_of(rail, rail.route(0, 33 * 8 + 2)) == "spine5");   // 140 + 33 = 173 = 7 x 24 + 5
  CHECK(spine_of(rail, rail.route(69 * 8 + 7, 8)) == "spine1");   // node 1, rail 0: 1
  CHECK(spine_of(rail, rail.route(8, 69 * 8 + 7)) == "spine7");   // 490 + 69 = 559 = 23 x 24 + 7
  CHECK(spine_of(rail, rail.route(9, 31 * 8 + 1)).empty());       // rail 1, nodes 1, 31: one leaf
  CHECK(spine_of(rail, rail.route(9, 64 * 8 + 1)) == "spine14");  // 70 + 64 = 134 = 5 x 24 + 14
  // H100 fat-tree 2:1, 9 nodes: 4 servers (32 NICs) per leaf, 3 leaves, 3 spines. NIC r of node n
  // is number 8 n + r.
  Topology ft = build_cluster(spec("dgx-h100", 9, 8, "fat-tree", 2));
  CHECK(spine_of(ft, ft.route(0, 8 * 8 + 5)) == "spine0");          // 69 = 23 x 3
  CHECK(spine_of(ft, ft.route(0, 4 * 8 + 1)) == "spine0");          // 33 = 11 x 3
  CHECK(spine_of(ft, ft.route(0, 4 * 8 + 2)) == "spine1");          // 34
  CHECK(spine_of(ft, ft.route(8 * 8 + 3, 4 * 8 + 3)) == "spine2");  // 35, from leaf 2
  CHECK(spine_of(ft, ft.route(7 * 8 + 7, 4 * 8 + 3)).empty());      // within leaf 1
}

// Speed is measured by the Google Benchmark suites (bench/), not asserted here.
// 32768 GPUs x 1056 fabric vertices is past the suffix table's flat slots: suffixes are hashed.
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
  CHECK(hops >= std::size_t{2} * 3 * 32768);
  for (int g : {0, 7, 8, 4095, 12345, 32767})
    for (int d : {1, 9, 255, 256, 20000, 32766})
      if (g != d) check_same(t, g, d);
}
