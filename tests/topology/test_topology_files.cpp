// Topology files and presets through the library and through 'zerosim topology': presets,
// overrides, explicit graphs, and bad input exiting 2 with the file, the JSON path (or flag) and
// the rule.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/topology/node_types.hpp"
#include "sim/topology/topology.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

struct Run {
  int rc;
  std::string out;
};

Run run_cli(const std::string& args) {
  std::string cmd = std::string(ZEROSIM_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

fs::path temp_dir() {
  auto d =
      fs::temp_directory_path() / ("zerosim_test_topology_files_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string write(const fs::path& dir, const std::string& name, const std::string& text) {
  auto p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

const char* kGood = R"({"gpu_model": "V100-SXM3-32GB", "gpus_per_node": 2,
  "nodes": [{"name": "g0", "kind": "gpu", "node": 0, "local": 0}, {"name": "g1", "kind": "gpu", "node": 0, "local": 1},
            {"name": "sw", "kind": "nvswitch", "node": 0}],
  "links": [{"from": "g0", "to": "sw", "GBps": 150, "latency_us": 0.3, "duplex": true},
            {"from": "g1", "to": "sw", "GBps": 150, "latency_us": 0.3}]})";

// Replaces the first occurrence of `from` in kGood.
std::string good_with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

void expect_bad(const std::string& args, std::initializer_list<std::string> fragments) {
  Run r = run_cli("topology --cluster " + args);
  CAPTURE(args);
  CAPTURE(r.out);
  CHECK(r.rc == 2);
  for (const auto& f : fragments) CHECK(r.out.find(f) != std::string::npos);
}

}  // namespace

TEST_CASE("a preset of one node type has no node count: without --nodes it is refused") {
  for (const char* n : {"dgx2-v100", "dgx-a100", "dgx-a100-40gb", "dgx-h100", "dgx-h200",
                        "azure-nd-a100-v4", "azure-nd-h200-v5"}) {
    CAPTURE(n);
    expect_input_error([&] { load_cluster(n); }, "<command line>", "--nodes",
                       std::string("required with --cluster ") + n);
    CHECK(load_cluster(n, ClusterOverrides{3, 0, 0, "", 0}).node_count() == 3);
  }
  // A measured or published cluster keeps its own count.
  CHECK(load_cluster("dgx2-v100-24n-rail").node_count() == 24);
  CHECK(load_cluster("h100-ndr-rail-10n").node_count() == 10);
}

TEST_CASE("shipped presets load with the documented shapes") {
  const ClusterOverrides one{1, 0, 0, "", 0};
  Topology v = load_cluster("dgx2-v100", one);
  CHECK(v.node_count() == 1);
  CHECK(v.gpu_count() == 16);
  CHECK(v.nics_per_node() == 8);
  CHECK(v.nic_Bps() == zerosim::testing::Approx(100e9 / 8));
  Topology paper = load_cluster("dgx2-v100-24n-rail");
  CHECK(paper.gpu_count() == 384);  // the ZeRO++ evaluation cluster
  for (const char* n : {"dgx-a100", "dgx-h100", "dgx-h200"})
    CHECK(load_cluster(n, one).gpu_count() == 8);
  CHECK(load_cluster("dgx-h200", one).gpu_model() == "H200-SXM-141GB");
  Topology ex =
      load_topology_file(std::string(ZEROSIM_SOURCE_DIR) + "/topologies/example-2x2-explicit.json");
  CHECK(ex.gpu_count() == 4);
  CHECK(ex.node_count() == 2);
  CHECK(ex.route(0, 1).links.size() == 2);  // over the NVSwitch
  CHECK(ex.route(0, 3).crosses_nodes);
  CHECK(ex.route(0, 3).links.size() == 4);  // gpu -> nic -> leaf -> nic -> gpu
}

TEST_CASE("presets of the clusters behind shared/data's nccl-tests logs") {
  struct Case {
    const char* preset;
    int nodes, gpus_per_node, nics;
    double nic_gbps;
    const char* gpu_model;
    const char* fabric;
    const char* profile;  // the shipped cost profile its GPU model selects
  };
  for (Case c :
       {Case{"h100-ndr-rail-10n", 10, 8, 8, 400, "H100-SXM5-80GB", "rail", "dgx-h100"},
        Case{"polaris", 2, 4, 2, 200, "A100-SXM4-40GB", "fat-tree", "polaris-a100-measured"},
        Case{"azure-nd-a100-v4", 1, 8, 8, 200, "A100-SXM4-80GB", "fat-tree", "dgx-a100"},
        Case{"azure-nd-h200-v5", 1, 8, 8, 400, "H200-SXM-141GB", "fat-tree",
             "dgx-h200-measured"}}) {
    CAPTURE(c.preset);
    // The Azure VMs are node types: their one node is asked for; the measured clusters keep theirs.
    Topology t = load_cluster(c.preset, ClusterOverrides{c.nodes == 1 ? 1 : 0, 0, 0, "", 0});
    CHECK(t.node_count() == c.nodes);
    CHECK(t.gpus_per_node() == c.gpus_per_node);
    CHECK(t.gpu_count() == c.nodes * c.gpus_per_node);
    CHECK(t.nics_per_node() == c.nics);
    CHECK(t.nic_Bps() == zerosim::testing::Approx(c.nic_gbps * 1e9 / 8));
    CHECK(t.gpu_model() == c.gpu_model);
    CHECK(t.summary().find(std::string("fabric ") + c.fabric + ", oversubscription 1\n") !=
          std::string::npos);
    const CostProfile p = select_cost_profile("", t);
    CHECK(p.name == c.profile);
    CHECK(p.gpu_model == t.gpu_model());
  }
  CHECK(load_cluster("h100-ndr-rail-10n").name() == "h100-cluster01");
  CHECK(load_cluster("polaris").node_type() == "polaris-a100");
  // The 40 GB A100's profile: datasheet memory and HBM bandwidth, not the 80 GB part's.
  const CostProfile a40 = select_cost_profile("", load_cluster("polaris"));
  CHECK(a40.hbm_Bps == zerosim::testing::Approx(1555e9));
  CHECK(a40.peak_flops == zerosim::testing::Approx(312e12));
  // Same GPU, other network: the DGX A100 40GB takes its own profile, not Polaris' measured one.
  CHECK(select_cost_profile("", load_cluster("dgx-a100-40gb", ClusterOverrides{1, 0, 0, "", 0}))
            .name == "dgx-a100-40gb");
}

TEST_CASE("Polaris at 256 nodes: 1024 GPUs; GPUs 0-1 use NIC 0, GPUs 2-3 NIC 1, on either fabric") {
  for (const char* fabric : {"fat-tree", "rail"}) {
    CAPTURE(fabric);
    ClusterOverrides o;
    o.nodes = 256;
    o.fabric = fabric;
    Topology t = load_cluster("polaris", o);
    CHECK(t.node_count() == 256);
    CHECK(t.gpu_count() == 1024);
    CHECK(t.nics_per_node() == 2);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        const Route& r = t.route(i, 4 * 255 + j);  // node 0 -> node 255
        REQUIRE(r.links.size() >= 4);
        CHECK(r.crosses_nodes);
        CHECK(t.vertex(t.link(r.links.front()).to).name == "n0.nic" + std::to_string(i / 2));
        CHECK(t.vertex(t.link(r.links.back()).from).name == "n255.nic" + std::to_string(j / 2));
      }
    }
  }
}

TEST_CASE("every preset's and every node type's GPU model has a shipped cost profile") {
  int presets = 0;
  for (const auto& e : fs::directory_iterator(std::string(ZEROSIM_SOURCE_DIR) + "/topologies")) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().string());
    const std::string path = e.path().string();
    // A node type's preset needs a node count: one.
    const Topology t = [&] {
      try {
        return load_topology_file(path);
      } catch (const zerosim::InputError& err) {
        if (err.path() != "--nodes") throw;
        return load_cluster(path, ClusterOverrides{1, 0, 0, "", 0});
      }
    }();
    CHECK(select_cost_profile("", t).gpu_model == t.gpu_model());  // throws when none matches
    ++presets;
  }
  CHECK(presets >= 10);
  for (const auto& nt : kNodeTypes) {
    CAPTURE(nt.name);
    CHECK(select_cost_profile_for_gpu("", nt.gpu_model).gpu_model == nt.gpu_model);
  }
}

TEST_CASE("the NIC path: the node type's, the builder's or the explicit graph's") {
  // Node types: DGX PXB with a PXN peer, Polaris PHB without (node_types.hpp).
  CHECK(load_cluster("dgx-h100", {1, 0, 0, "", 0}).nic_path() == NicPath::Pxb);
  CHECK(load_cluster("dgx-h100", {1, 0, 0, "", 0}).pxn());
  CHECK(load_cluster("polaris").nic_path() == NicPath::Phb);
  CHECK_FALSE(load_cluster("polaris").pxn());
  auto dir = temp_dir();
  // A builder's keys replace the node type's; PXN then stands in for the far path (typeInter).
  auto f = write(
      dir, "sys.json",
      R"({"builder": {"node_type": "dgx-h100", "nodes": 1, "nic_path": "SYS", "pxn": true}})");
  Topology sys = load_topology_file(f);
  CHECK(sys.nic_path() == NicPath::Sys);
  CHECK(sys.nccl_type_inter() == NicPath::Pxn);
  f = write(
      dir, "phb.json",
      R"({"builder": {"node_type": "dgx-h100", "nodes": 1, "nic_path": "PHB", "pxn": false}})");
  Topology phb = load_topology_file(f);
  CHECK(phb.nccl_type_inter() == NicPath::Phb);
  // Same graph, another NIC path: caches keyed by the builder tell them apart.
  CHECK(phb.builder_key() != load_cluster("dgx-h100", {1, 0, 0, "", 0}).builder_key());
  // An explicit graph: PXB without PXN when absent.
  Topology ex =
      load_topology_file(std::string(ZEROSIM_SOURCE_DIR) + "/topologies/example-2x2-explicit.json");
  CHECK(ex.nic_path() == NicPath::Pxb);
  CHECK_FALSE(ex.pxn());
  fs::remove_all(dir);
}

TEST_CASE("command-line overrides apply to builder presets") {
  ClusterOverrides o;
  o.nodes = 3;
  o.nics_per_node = 4;
  o.nic_gbps = 200;
  o.fabric = "fat-tree";
  o.oversubscription = 2;
  Topology t = load_cluster("dgx2-v100", o);
  CHECK(t.gpu_count() == 48);
  CHECK(t.nics_per_node() == 4);
  CHECK(t.nic_Bps() == zerosim::testing::Approx(200e9 / 8));
  CHECK(t.summary().find("fat-tree, oversubscription 2") != std::string::npos);
}

TEST_CASE("zerosim topology prints the summary and writes DOT") {
  auto dir = temp_dir();
  auto dot = (dir / "c.dot").string();
  Run r = run_cli("topology --cluster dgx-h100 --nodes 2 --dot " + dot);
  CAPTURE(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find("16 GPUs") != std::string::npos);
  std::ifstream in(dot);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.rfind("digraph", 0) == 0);
  CHECK(text.find("n1.gpu7") != std::string::npos);
  CHECK(text.find("450 GB/s") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("bad topology input exits 2 naming file, path and rule") {
  auto dir = temp_dir();
  auto good = write(dir, "good.json", kGood);
  CHECK(run_cli("topology --cluster " + good).rc == 0);

  auto f = write(dir, "malformed.json", R"({"builder": {"node_type": )");
  expect_bad(f, {f, "malformed JSON"});
  f = write(dir, "unknown-to.json",
            good_with(R"("to": "sw", "GBps": 150)", R"("to": "nope", "GBps": 150)"));
  expect_bad(f, {f, "/links/0/to", "unknown node 'nope'"});
  f = write(dir, "zero-bw.json", good_with(R"("GBps": 150)", R"("GBps": 0)"));
  expect_bad(f, {f, "/links/0/GBps", "must be positive"});
  f = write(dir, "neg-bw.json", good_with(R"("GBps": 150)", R"("gbps": -100)"));
  expect_bad(f, {f, "/links/0/gbps", "must be positive"});
  f = write(dir, "two-bw.json", good_with(R"("GBps": 150)", R"("GBps": 150, "gbps": 1200)"));
  expect_bad(f, {f, "/links/0", "exactly one of"});
  f = write(dir, "dup.json", good_with(R"("name": "sw")", R"("name": "g1")"));
  expect_bad(f, {f, "/nodes/2/name", "duplicate vertex name 'g1'"});
  f = write(
      dir, "unknown-key.json",
      good_with(R"("latency_us": 0.3, "duplex")", R"("latency_us": 0.3, "colour": 1, "duplex")"));
  expect_bad(f, {f, "/links/0/colour", "unknown key"});
  // g1 has no link: it cannot reach g0.
  f = write(dir, "disconnected.json",
            good_with(R"({"from": "g1", "to": "sw", "GBps": 150, "latency_us": 0.3})",
                      R"({"from": "sw", "to": "g0", "GBps": 150, "latency_us": 0.3})"));
  expect_bad(f, {f, "/nodes/1", "disconnected GPU", "'g1'"});
  f = write(dir, "missing-gpu.json", good_with(R"("local": 1)", R"("local": 0)"));
  expect_bad(f, {f, "/nodes/1/local", "already has a GPU"});
  f = write(dir, "bad-kind.json", good_with(R"("kind": "nvswitch")", R"("kind": "router")"));
  expect_bad(f, {f, "/nodes/2/kind", "unknown kind 'router'"});

  f = write(dir, "nics.json",
            R"({"builder": {"node_type": "dgx-h100", "nodes": 2, "nics_per_node": 9}})");
  expect_bad(f, {f, "/builder/nics_per_node", "between 1 and 8"});
  f = write(dir, "nic-path.json", R"({"builder": {"node_type": "dgx-h100", "nic_path": "PXN"}})");
  expect_bad(f, {f, "/builder/nic_path", "PIX, PXB, PHB or SYS"});
  f = write(dir, "pxn.json", R"({"builder": {"node_type": "dgx-h100", "pxn": 1}})");
  expect_bad(f, {f, "/builder/pxn", "true or false"});
  f = write(dir, "explicit-nic-path.json",
            good_with(R"("gpus_per_node")", R"("nic_path": "pxb", "gpus_per_node")"));
  expect_bad(f, {f, "/nic_path", "PIX, PXB, PHB or SYS"});
  f = write(dir, "fabric.json", R"({"builder": {"node_type": "dgx-h100", "fabric": "torus"}})");
  expect_bad(f, {f, "/builder/fabric", "unknown fabric 'torus'"});
  f = write(dir, "over.json", R"({"builder": {"node_type": "dgx-h100", "oversubscription": 0.5}})");
  expect_bad(f, {f, "/builder/oversubscription", "at least 1"});
  f = write(dir, "type.json", R"({"builder": {"node_type": "dgx-z"}})");
  expect_bad(f, {f, "/builder/node_type", "unknown node type 'dgx-z'"});
  f = write(dir, "zero-nodes.json", R"({"builder": {"node_type": "dgx-h100", "nodes": 0}})");
  expect_bad(f, {f, "/builder/nodes", "between 1 and"});
  f = write(dir, "builder-key.json", R"({"builder": {"node_type": "dgx-h100", "gpus": 4}})");
  expect_bad(f, {f, "/builder/gpus", "unknown key"});

  expect_bad("no-such-preset", {"--cluster", "unknown preset 'no-such-preset'", "dgx-h100"});
  expect_bad("dgx-h100 --nics-per-node 9",
             {"<command line>", "--nics-per-node", "between 1 and 8"});
  expect_bad("dgx2-v100 --nodes 0", {"--nodes"});
  expect_bad("dgx2-v100 --fabric torus", {"--fabric"});
  expect_bad("dgx2-v100 --oversubscription 0.5", {"--oversubscription"});
  expect_bad(good + " --nodes 4", {"--nodes", "explicit graph", good});
  expect_bad((dir / "absent.json").string(), {"absent.json", "does not exist"});
  fs::remove_all(dir);
}
