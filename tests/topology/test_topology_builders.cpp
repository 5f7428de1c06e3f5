// Builders: vertex/link counts from closed forms, hand-checked routes, bandwidths per datasheet.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/topology/topology.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"
#include "tests/topology/cluster_spec.hpp"

using namespace zerosim;
using test::spec;

namespace {

std::vector<std::string> path_names(const Topology& t, const Route& r) {
  std::vector<std::string> names;
  if (r.links.empty()) return names;
  names.push_back(t.vertex(t.link(r.links[0]).from).name);
  for (auto id : r.links) names.push_back(t.vertex(t.link(id).to).name);
  return names;
}

int count_kind(const Topology& t, NodeKind k) {
  int c = 0;
  for (int v = 0; v < t.vertex_count(); ++v) c += t.vertex(v).kind == k;
  return c;
}

}  // namespace

TEST_CASE("1-node DGX-H100: gpu0 -> gpu5 goes through the NVSwitch over NVLink") {
  Topology t = build_cluster(spec("dgx-h100", 1));
  CHECK(t.gpu_count() == 8);
  CHECK(t.gpu_model() == "H100-SXM5-80GB");
  const Route& r = t.route(0, 5);
  CHECK(path_names(t, r) == std::vector<std::string>{"n0.gpu0", "n0.nvswitch", "n0.gpu5"});
  REQUIRE(r.links.size() == 2);
  for (auto id : r.links) {
    CHECK(t.link(id).cls == LinkClass::NvLink);
    CHECK(t.link(id).bandwidth_Bps ==
          zerosim::testing::Approx(450e9));  // 18 NVLink4 x 25 GB/s per direction
  }
  CHECK_FALSE(r.crosses_nodes);
  CHECK(r.latency_s ==
        zerosim::testing::Approx(t.link(r.links[0]).latency_s + t.link(r.links[1]).latency_s));
}

TEST_CASE("2-node DGX-2, 8 NICs: same-rail route uses nic1 of both nodes and the rail-1 leaf") {
  Topology t = build_cluster(spec("dgx2-v100", 2, 8));
  CHECK(t.gpus_per_node() == 16);
  const Route& r = t.route(3, 16 + 3);  // GPU local 3 -> NIC floor(3*8/16) = 1
  CHECK(path_names(t, r) ==
        std::vector<std::string>{"n0.gpu3", "n0.nic1", "rail1.leaf0", "n1.nic1", "n1.gpu3"});
  CHECK(r.crosses_nodes);
  CHECK(t.link(r.links[0]).cls == LinkClass::Pcie);
  CHECK(t.link(r.links[0]).bandwidth_Bps == zerosim::testing::Approx(15.75e9));  // PCIe gen3 x16
  CHECK(t.link(r.links[1]).cls == LinkClass::Network);
  CHECK(t.link(r.links[1]).bandwidth_Bps == zerosim::testing::Approx(100e9 / 8));  // EDR 100 Gbps
  CHECK(t.link(r.links[3]).cls == LinkClass::Pcie);
}

TEST_CASE("2-node DGX-2: cross-rail traffic goes up to a spine") {
  Topology t = build_cluster(spec("dgx2-v100", 2, 8));
  const Route& r = t.route(0, 16 + 15);  // nic0 of node 0 -> nic7 of node 1
  auto names = path_names(t, r);
  REQUIRE(names.size() == 7);
  CHECK(names[1] == "n0.nic0");
  CHECK(names[2] == "rail0.leaf0");
  // D-mod-k: NICs are numbered leaf by leaf (rail r holds nodes 0, 1: n1.nic7 is 2 x 7 + 1 = 15),
  // and 8 spines: spine 15 mod 8.
  CHECK(names[3] == "spine7");
  CHECK(names[4] == "rail7.leaf0");
  CHECK(names[5] == "n1.nic7");
}

TEST_CASE("DGX-2 GPUs sharing a NIC still talk over NVLink (latency tie-break)") {
  Topology t = build_cluster(spec("dgx2-v100", 1, 8));
  const Route& r = t.route(2, 3);  // both on nic1; gpu2 -> nic1 -> gpu3 is also 2 hops
  CHECK(path_names(t, r) == std::vector<std::string>{"n0.gpu2", "n0.nvswitch", "n0.gpu3"});
}

TEST_CASE("NIC assignment: GPU local i uses NIC floor(i*K/G)") {
  for (int k : {1, 2, 3, 4, 8}) {
    Topology t = build_cluster(spec("dgx2-v100", 2, k));
    CHECK(t.nics_per_node() == k);
    for (int i = 0; i < 16; ++i) {
      const Route& r = t.route(i, 16 + i);
      CHECK(t.vertex(t.link(r.links[0]).to).name == "n0.nic" + std::to_string(i * k / 16));
    }
  }
}

TEST_CASE("vertex and link counts per builder (closed forms)") {
  struct Case {
    const char* type;
    int nodes, nics;
    const char* fabric;
    int gpus_per_node;
  };
  for (Case c :
       {Case{"dgx2-v100", 24, 8, "rail", 16}, Case{"dgx2-v100", 3, 4, "fat-tree", 16},
        Case{"dgx-a100", 40, 8, "rail", 8}, Case{"dgx-h100", 9, 8, "fat-tree", 8},
        Case{"dgx-h200", 1, 8, "rail", 8}, Case{"dgx-h100", 1, 1, "rail", 8},
        Case{"polaris-a100", 256, 2, "fat-tree", 4}, Case{"polaris-a100", 40, 2, "rail", 4}}) {
    CAPTURE(c.type);
    CAPTURE(c.nodes);
    CAPTURE(c.fabric);
    Topology t = build_cluster(spec(c.type, c.nodes, c.nics, c.fabric));
    const bool rail = std::string(c.fabric) == "rail";
    const int leaves =
        rail ? c.nics * ((c.nodes + 31) / 32) : (c.nodes + (32 / c.nics) - 1) / (32 / c.nics);
    const int spines = leaves > 1 ? std::min(32, leaves) : 0;
    CHECK(count_kind(t, NodeKind::Gpu) == c.nodes * c.gpus_per_node);
    CHECK(count_kind(t, NodeKind::NvSwitch) == c.nodes);
    CHECK(count_kind(t, NodeKind::Nic) == c.nodes * c.nics);
    CHECK(count_kind(t, NodeKind::LeafSwitch) == leaves);
    CHECK(count_kind(t, NodeKind::SpineSwitch) == spines);
    // Directed links: per GPU NVLink + PCIe duplex, per NIC one duplex uplink, leaf x spine duplex.
    CHECK(t.link_count() ==
          2 * (2 * c.nodes * c.gpus_per_node + c.nodes * c.nics + leaves * spines));
    std::set<std::string> names;
    for (int v = 0; v < t.vertex_count(); ++v) names.insert(t.vertex(v).name);
    CHECK(names.size() == static_cast<std::size_t>(t.vertex_count()));
  }
}

TEST_CASE("datasheet bandwidths per node type") {
  struct Case {
    const char* type;
    double nvlink_GBps, pcie_GBps, nic_gbps;
  };
  for (Case c : {Case{"dgx2-v100", 150, 15.75, 100}, Case{"dgx-a100", 300, 31.5, 200},
                 Case{"dgx-h100", 450, 63, 400}, Case{"dgx-h200", 450, 63, 400},
                 Case{"polaris-a100", 300, 31.5, 200}}) {
    CAPTURE(c.type);
    Topology t = build_cluster(spec(c.type, 2));
    const int g = t.gpus_per_node();
    const Route& r = t.route(0, g);
    CHECK(t.link(r.links[0]).bandwidth_Bps == zerosim::testing::Approx(c.pcie_GBps * 1e9));
    CHECK(t.link(r.links[1]).bandwidth_Bps == zerosim::testing::Approx(c.nic_gbps * 1e9 / 8));
    CHECK(t.nic_Bps() == zerosim::testing::Approx(c.nic_gbps * 1e9 / 8));
    CHECK(t.link(t.route(0, 1).links[0]).bandwidth_Bps ==
          zerosim::testing::Approx(c.nvlink_GBps * 1e9));
  }
}

TEST_CASE("fat-tree with oversubscription 2: a leaf's uplinks carry half its downlink bandwidth") {
  for (double over : {1.0, 2.0, 4.0}) {
    Topology t =
        build_cluster(spec("dgx-h100", 8, 8, "fat-tree", over));  // 4 nodes per leaf, 2 leaves
    double down = 0, up = 0;
    for (const auto& l : t.links()) {
      if (t.vertex(l.to).name != "leaf0") continue;
      if (t.vertex(l.from).kind == NodeKind::Nic) down += l.bandwidth_Bps;
      if (t.vertex(l.from).kind == NodeKind::SpineSwitch) up += l.bandwidth_Bps;
    }
    CHECK(down == zerosim::testing::Approx(32 * 400e9 / 8));
    CHECK(up == zerosim::testing::Approx(down / over));
  }
}

TEST_CASE("single-leaf fabrics route without spines") {
  Topology ft = build_cluster(spec("dgx-h100", 3, 8, "fat-tree"));  // 4 nodes fit one leaf
  CHECK(count_kind(ft, NodeKind::SpineSwitch) == 0);
  CHECK(ft.route(0, 23).links.size() == 4);  // gpu -> nic7 -> leaf0 -> nic7 -> gpu
  Topology one = build_cluster(spec("dgx-a100", 1, 1));
  CHECK(one.route(0, 7).links.size() == 2);
}

TEST_CASE("bad builder parameters name the field") {
  auto expect = [](ClusterSpec s, const char* field) {
    CAPTURE(field);
    const auto e = caught_input_error([&] { build_cluster(s, "f.json"); });
    CHECK(e.file() == "f.json");
    CHECK(e.path() == field);
  };
  expect(spec("dgx-h100", 0), "nodes");
  expect(spec("dgx-h100", 1, 9), "nics_per_node");
  expect(spec("dgx-h100", 1, 0), "nics_per_node");
  expect(spec("dgx-x", 1), "node_type");
  expect(spec("dgx-h100", 1, 8, "torus"), "fabric");
  expect(spec("dgx-h100", 1, 8, "rail", 0.5), "oversubscription");
  auto s = spec("dgx-h100", 1);
  s.nic_gbps = 0;
  expect(s, "nic_gbps");
}

TEST_CASE("builder keys: equal for equal parameters (and equal graphs), distinct otherwise") {
  auto graph_of = [](const Topology& t) {
    std::vector<std::tuple<int, int, double, double, int>> links;
    for (const LinkInfo& l : t.links())
      links.emplace_back(l.from, l.to, l.bandwidth_Bps, l.latency_s, static_cast<int>(l.cls));
    std::vector<std::tuple<int, int, int>> vertices;
    for (int v = 0; v < t.vertex_count(); ++v)
      vertices.emplace_back(static_cast<int>(t.vertex(v).kind), t.vertex(v).node,
                            t.vertex(v).local);
    return std::pair{links, vertices};
  };
  ClusterSpec base = spec("dgx-h100", 4, -1, "fat-tree", 2);
  ClusterSpec renamed = base;
  renamed.name = "another-name";  // not part of the graph
  const Topology a = build_cluster(base), b = build_cluster(base), r = build_cluster(renamed);
  CHECK_FALSE(a.builder_key().empty());
  CHECK(a.builder_key() == b.builder_key());
  CHECK(a.builder_key() == r.builder_key());
  CHECK(graph_of(a) == graph_of(b));
  CHECK(graph_of(a) == graph_of(r));
  // Each parameter changes the key.
  std::vector<ClusterSpec> others(6, base);
  others[0].node_type = "dgx-a100";
  others[1].nodes = 5;
  others[2].nics_per_node = 4;
  others[3].nic_gbps = 200;
  others[4].fabric = "rail";
  others[5].oversubscription = 2.5;
  std::set<std::string> keys{a.builder_key()};
  for (const ClusterSpec& s : others) keys.insert(build_cluster(s).builder_key());
  CHECK(keys.size() == 7);
  // Explicit graphs have none.
  CHECK(
      load_topology_file(std::string(ZEROSIM_SOURCE_DIR) + "/topologies/example-2x2-explicit.json")
          .builder_key()
          .empty());
}
