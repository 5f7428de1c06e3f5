// CostProfile: strict parsing (each bad-input rule names file and JSON path), round trip, GEMM
// curve interpolation against closed forms, and selection of the shipped profiles by GPU model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/profile/cost_profile.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

const std::string kShipped = std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/";

json minimal_profile() {
  json k = json::object();
  for (const auto& name : cost_profile_kernel_names())
    k[name] = {{"throughput_GBps", 1000}, {"launch_us", 5}};
  return {{"version", 2},
          {"name", "test"},
          {"gpu_model", "TEST-GPU"},
          {"provenance", {{"status", "derived"}}},
          {"gpu", {{"peak_tflops", 100}, {"memory_bytes", 1000000000}, {"hbm_GBps", 1000}}},
          {"gemm_efficiency",
           {{{"flops", 1e8}, {"efficiency", 0.1}}, {{"flops", 1e10}, {"efficiency", 0.5}}}},
          {"attention_efficiency", 0.4},
          {"compute",
           {{"sm_count", 100},
            {"gemm_tile", 128},
            {"memory_bound_fraction", 0.8},
            {"flash_forward_efficiency", 0.6},
            {"flash_backward_efficiency", 0.5},
            {"flash_seq_half", 400},
            {"kernel_overhead_us", 2}}},
          {"kernels", k},
          {"optimizer_GBps", 600},
          {"memory_reserved_bytes", 1000},
          {"host_op_us", 5},
          {"link_classes",
           {{"nvlink",
             {{"hop_latency_us", 3.4},
              {"ll_hop_latency_us", 0.6},
              {"ll128_hop_latency_us", 1.9},
              {"efficiency", 0.8}}},
            {"pcie",
             {{"hop_latency_us", 5.7},
              {"ll_hop_latency_us", 1.0},
              {"ll128_hop_latency_us", 2.5},
              {"efficiency", 0.8}}},
            {"network",
             {{"hop_latency_us", 14},
              {"ll_hop_latency_us", 2.7},
              {"ll128_hop_latency_us", 4.0},
              {"efficiency", 0.9}}}}},
          {"nccl",
           {{"version", "2.18.3"},
            {"arch", "hopper"},
            {"channels", 16},
            {"launch_us", 5},
            {"nvls", true},
            {"nvls_efficiency", 0.85},
            {"p2p_peer_us", 1},
            {"p2p_net_peer_us", 7},
            {"p2p_efficiency", 0.9},
            {"host_cpu", "amd"}}}};
}

// Expects parse to throw InputError whose path is `path` and whose rule contains `rule_part`.
void expect_bad(const std::function<void(json&)>& mutate, const std::string& path,
                const std::string& rule_part) {
  json j = minimal_profile();
  mutate(j);
  CAPTURE(path);
  expect_input_error([&] { parse_cost_profile(j, "bad.json"); }, "bad.json", path, rule_part);
}

// An optional ratio under "nccl": 1 when absent, not written when 1, read and written back when
// set.
void check_optional_ratio(const char* key, double NcclParams::*field, double value) {
  CAPTURE(key);
  const CostProfile plain = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(plain.nccl.*field == 1.0);
  CHECK_FALSE(to_json(plain)["nccl"].contains(key));
  json j = minimal_profile();
  j["nccl"][key] = value;
  const CostProfile set = parse_cost_profile(j, "ok.json");
  CHECK(set.nccl.*field == value);
  CHECK(to_json(set)["nccl"][key] == value);
  CHECK(parse_cost_profile(to_json(set), "again.json").nccl == set.nccl);
}

}  // namespace

TEST_CASE("nccl.ll128_efficiency and ll_intra_efficiency are optional: 1 when absent") {
  check_optional_ratio("ll128_efficiency", &NcclParams::ll128_efficiency, 0.56);
  check_optional_ratio("ll_intra_efficiency", &NcclParams::ll_intra_efficiency, 1.9);
}

TEST_CASE("minimal profile parses with units converted") {
  CostProfile p = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(p.name == "test");
  CHECK(p.status == "derived");
  CHECK(p.peak_flops == zerosim::testing::Approx(100e12));
  CHECK(p.hbm_Bps == zerosim::testing::Approx(1000e9));
  CHECK(p.memory_bytes == 1000000000u);
  CHECK(p.kernel("copy").launch_s == zerosim::testing::Approx(5e-6));
  CHECK(p.kernel_time("copy", 1e9) == zerosim::testing::Approx(5e-6 + 1e-3));
  CHECK(p.link_class(LinkClass::Network).hop_latency_s == zerosim::testing::Approx(14e-6));
  CHECK(p.link_class(LinkClass::NvLink).efficiency == zerosim::testing::Approx(0.8));
  CHECK(p.link_class(LinkClass::Network).ll_hop_latency_s == zerosim::testing::Approx(2.7e-6));
  CHECK(p.link_class(LinkClass::Pcie).ll128_hop_latency_s == zerosim::testing::Approx(2.5e-6));
  CHECK(p.nccl.version_code == 21803);
  CHECK(p.nccl.arch == GpuArch::Hopper);
  CHECK(p.nccl.channels == 16);
  CHECK(p.nccl.launch_s == zerosim::testing::Approx(5e-6));
  CHECK(p.nccl.nvls);
  CHECK(p.nccl.p2p_peer_s == zerosim::testing::Approx(1e-6));
  CHECK(p.nccl.p2p_net_peer_s == zerosim::testing::Approx(7e-6));
  CHECK(p.nccl.host_cpu == HostCpu::Amd);
  CHECK_THROWS_AS(p.kernel("no_such_kernel"), std::out_of_range);
}

TEST_CASE("GEMM efficiency is piecewise linear in log10(flops) and clamped") {
  CostProfile p = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(p.gemm_efficiency_at(1e3) == zerosim::testing::Approx(0.1));  // clamped below
  CHECK(p.gemm_efficiency_at(1e8) == zerosim::testing::Approx(0.1));
  CHECK(p.gemm_efficiency_at(1e9) ==
        zerosim::testing::Approx(0.3));  // halfway in log10 between 8 and 10
  CHECK(p.gemm_efficiency_at(1e10) == zerosim::testing::Approx(0.5));
  CHECK(p.gemm_efficiency_at(1e15) == zerosim::testing::Approx(0.5));  // clamped above
  double x = std::pow(10.0, 8.5);                                      // a quarter of the way
  CHECK(p.gemm_efficiency_at(x) == zerosim::testing::Approx(0.2));
}

TEST_CASE("NCCL versions: MAJOR.MINOR[.PATCH] codes") {
  CHECK(nccl_version_code("2.18") == 21800);
  CHECK(nccl_version_code("2.7.8") == 20708);
  CHECK(nccl_version_code("2.29.2") == 22902);
  for (const char* bad : {"", "2", "2.", "2.x", "2.18.", "2.18.3.1", "2.100", "v2.18"})
    CHECK_MESSAGE(nccl_version_code(bad) == -1, bad);
}

TEST_CASE("to_json round-trips") {
  json j = minimal_profile();
  CostProfile p = parse_cost_profile(j, "ok.json");
  CostProfile q = parse_cost_profile(to_json(p), "roundtrip.json");
  CHECK(to_json(q) == to_json(p));
  CHECK(q.gemm_efficiency == p.gemm_efficiency);
  CHECK(q.nccl.version == "2.18.3");
  CHECK(q.link_class(LinkClass::NvLink).ll128_hop_latency_s == zerosim::testing::Approx(1.9e-6));
  // No small-message path: its keys are not written (they are optional).
  CHECK_FALSE(to_json(p)["nccl"].contains("p2p_small_bytes"));
  CHECK(q.nccl.p2p_small_bytes == 0);
}

TEST_CASE("nccl.nvls_chunk_us is optional (0 when absent) and needs NVLS") {
  const CostProfile plain = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(plain.nccl.nvls_chunk_s == 0);
  CHECK_FALSE(to_json(plain)["nccl"].contains("nvls_chunk_us"));
  json j = minimal_profile();
  j["nccl"]["nvls"] = true;
  j["nccl"]["nvls_chunk_us"] = 2.5;
  const CostProfile p = parse_cost_profile(j, "ok.json");
  CHECK(p.nccl.nvls_chunk_s == zerosim::testing::Approx(2.5e-6));
  CHECK(to_json(p)["nccl"]["nvls_chunk_us"] == zerosim::testing::Approx(2.5));
  CHECK(parse_cost_profile(to_json(p), "again.json").nccl == p.nccl);
  expect_bad(
      [](json& j) {
        j["nccl"]["nvls"] = false;
        j["nccl"]["nvls_chunk_us"] = 1;
      },
      "/nccl/nvls_chunk_us", "no NVLS");
  expect_bad([](json& j) { j["nccl"]["nvls_chunk_us"] = -1; }, "/nccl/nvls_chunk_us", "negative");
}

TEST_CASE("nccl.host_launch_us is optional (0 when absent), non-negative, round-trips") {
  const CostProfile plain = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(plain.nccl.host_launch_s == 0);
  CHECK_FALSE(to_json(plain)["nccl"].contains("host_launch_us"));
  json j = minimal_profile();
  j["nccl"]["host_launch_us"] = 5.4;
  const CostProfile p = parse_cost_profile(j, "ok.json");
  CHECK(p.nccl.host_launch_s == zerosim::testing::Approx(5.4e-6));
  CHECK(to_json(p)["nccl"]["host_launch_us"] == zerosim::testing::Approx(5.4));
  CHECK(parse_cost_profile(to_json(p), "again.json").nccl == p.nccl);
  expect_bad([](json& j) { j["nccl"]["host_launch_us"] = -1; }, "/nccl/host_launch_us", "negative");
}

TEST_CASE("the small-message path's keys are optional, read and written together") {
  json j = minimal_profile();
  j["nccl"]["p2p_small_bytes"] = 256;
  j["nccl"]["p2p_small_net_peer_us"] = 11;
  const CostProfile p = parse_cost_profile(j, "ok.json");
  CHECK(p.nccl.p2p_small_bytes == 256);
  CHECK(p.nccl.p2p_small_net_peer_s == zerosim::testing::Approx(11e-6));
  const json out = to_json(p);
  CHECK(out["nccl"]["p2p_small_bytes"] == 256);
  CHECK(out["nccl"]["p2p_small_net_peer_us"] == zerosim::testing::Approx(11));
  CHECK(to_json(parse_cost_profile(out, "roundtrip.json")) == out);
}

TEST_CASE("nccl.nic_path is refused: the NIC path is the cluster's") {
  CHECK_FALSE(
      to_json(parse_cost_profile(minimal_profile(), "ok.json"))["nccl"].contains("nic_path"));
  expect_bad([](json& j) { j["nccl"]["nic_path"] = "PXB"; }, "/nccl/nic_path",
             "property of the cluster");
}

TEST_CASE("the fabric's group law: group_nodes and group_step_us, optional and together") {
  const CostProfile plain = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(plain.nccl.group_nodes == 0);
  CHECK(plain.nccl.group_step_s == 0);
  CHECK_FALSE(to_json(plain)["nccl"].contains("group_nodes"));
  json j = minimal_profile();
  j["nccl"]["group_nodes"] = 14;
  j["nccl"]["group_step_us"] = 7.5;
  const CostProfile p = parse_cost_profile(j, "ok.json");
  CHECK(p.nccl.group_nodes == 14);
  CHECK(p.nccl.group_step_s == zerosim::testing::Approx(7.5e-6));
  CHECK(parse_cost_profile(to_json(p), "again.json").nccl == p.nccl);
  expect_bad([](json& j) { j["nccl"]["group_step_us"] = 3; }, "/nccl/group_step_us",
             "group_nodes is 0");
  expect_bad([](json& j) { j["nccl"]["group_nodes"] = -1; }, "/nccl/group_nodes", "");
  expect_bad(
      [](json& j) {
        j["nccl"]["group_nodes"] = 14;
        j["nccl"]["group_step_us"] = -1;
      },
      "/nccl/group_step_us", "negative");
}

TEST_CASE("collectives_trust: fitted on its logs, derived and checked, or derived, unvalidated") {
  CostProfile p = parse_cost_profile(minimal_profile(), "ok.json");
  CHECK(collectives_trust(p) == "derived, unvalidated");
  p.provenance["collectives"] = {{"checked_against", {"a.log", "b.log"}},
                                 {"validation", "mean 5%"}};
  CHECK(collectives_trust(p) == "derived, checked against a.log, b.log (mean 5%)");
  p.provenance["collectives"]["fitted_on"] = {"c.log"};
  CHECK(collectives_trust(p) == "fitted on c.log (mean 5%)");
  p.provenance["collectives"] = {{"fitted_on", {1, "d.log"}}};  // free-form: strings only
  CHECK(collectives_trust(p) == "fitted on d.log");
}

TEST_CASE("bad input: each rule names the JSON path") {
  expect_bad([](json& j) { j["extra"] = 1; }, "/extra", "unknown key");
  expect_bad([](json& j) { j["gpu"]["peak_tflop"] = 1; }, "/gpu/peak_tflop", "unknown key");
  expect_bad([](json& j) { j["version"] = 1; }, "/version", "unsupported version");
  expect_bad([](json& j) { j.erase("name"); }, "", "missing required key 'name'");
  expect_bad([](json& j) { j["name"] = 3; }, "/name", "must be a string");
  expect_bad([](json& j) { j["provenance"]["status"] = "guessed"; }, "/provenance/status",
             "derived");
  expect_bad([](json& j) { j["provenance"] = "x"; }, "/provenance", "object");
  expect_bad([](json& j) { j["gpu"]["peak_tflops"] = 0; }, "/gpu/peak_tflops", "positive");
  expect_bad([](json& j) { j["gpu"]["hbm_GBps"] = -5; }, "/gpu/hbm_GBps", "positive");
  expect_bad([](json& j) { j["gpu"]["hbm_GBps"] = "fast"; }, "/gpu/hbm_GBps", "must be a number");
  expect_bad([](json& j) { j["gpu"]["memory_bytes"] = 1.5; }, "/gpu/memory_bytes", "integer");
  expect_bad([](json& j) { j["gemm_efficiency"] = json::array(); }, "/gemm_efficiency",
             "at least one");
  expect_bad([](json& j) { j["gemm_efficiency"][1]["flops"] = 1e8; }, "/gemm_efficiency/1/flops",
             "increasing");
  expect_bad([](json& j) { j["gemm_efficiency"][0]["efficiency"] = 1.2; },
             "/gemm_efficiency/0/efficiency", "(0, 1]");
  expect_bad([](json& j) { j["attention_efficiency"] = 0; }, "/attention_efficiency", "(0, 1]");
  expect_bad([](json& j) { j["compute"]["memory_bound_fraction"] = 1.5; },
             "/compute/memory_bound_fraction", "(0, 1]");
  expect_bad([](json& j) { j["compute"]["sm_count"] = 0; }, "/compute/sm_count", "positive");
  expect_bad([](json& j) { j["compute"]["kernel_overhead_us"] = 5000; },
             "/compute/kernel_overhead_us", "at most 1000");
  expect_bad([](json& j) { j["compute"].erase("flash_seq_half"); }, "/compute",
             "missing required key 'flash_seq_half'");
  expect_bad([](json& j) { j["kernels"]["quantize_int3"] = j["kernels"]["copy"]; },
             "/kernels/quantize_int3", "unknown kernel");
  expect_bad([](json& j) { j["kernels"].erase("copy"); }, "/kernels",
             "missing required kernel 'copy'");
  expect_bad([](json& j) { j["kernels"]["copy"]["throughput_GBps"] = 0; },
             "/kernels/copy/throughput_GBps", "positive");
  expect_bad([](json& j) { j["kernels"]["copy"]["launch_us"] = -1; }, "/kernels/copy/launch_us",
             "negative");
  expect_bad([](json& j) { j["optimizer_GBps"] = 0; }, "/optimizer_GBps", "positive");
  expect_bad([](json& j) { j["host_op_us"] = -1; }, "/host_op_us", "negative");
  expect_bad([](json& j) { j.erase("host_op_us"); }, "", "missing required key 'host_op_us'");
  // The removed fetch charges are named with what replaced them.
  for (const char* old : {"zero3_fetch_ns_per_byte", "zero3_fetch_ns_per_param"})
    expect_bad([&](json& j) { j[old] = 0.05; }, std::string("/") + old, "give host_op_us");
  expect_bad([](json& j) { j["memory_reserved_bytes"] = 2e9; }, "/memory_reserved_bytes",
             "less than");
  expect_bad([](json& j) { j["link_classes"].erase("pcie"); }, "/link_classes",
             "missing required key 'pcie'");
  expect_bad([](json& j) { j["link_classes"]["infiniband"] = j["link_classes"]["network"]; },
             "/link_classes/infiniband", "unknown key");
  expect_bad([](json& j) { j["link_classes"]["network"]["efficiency"] = 1.01; },
             "/link_classes/network/efficiency", "(0, 1]");
  expect_bad([](json& j) { j["link_classes"]["nvlink"]["hop_latency_us"] = -1; },
             "/link_classes/nvlink/hop_latency_us", "negative");
  expect_bad([](json& j) { j["link_classes"]["network"].erase("ll_hop_latency_us"); },
             "/link_classes/network", "missing required key 'll_hop_latency_us'");
  expect_bad([](json& j) { j["collectives"] = json::object(); }, "/collectives", "unknown key");
  expect_bad([](json& j) { j.erase("nccl"); }, "", "missing required key 'nccl'");
  expect_bad([](json& j) { j["nccl"]["version"] = "2.x"; }, "/nccl/version", "MAJOR.MINOR");
  expect_bad([](json& j) { j["nccl"]["version"] = "2.4"; }, "/nccl/version", "outside");
  expect_bad([](json& j) { j["nccl"]["arch"] = "blackwell"; }, "/nccl/arch", "volta");
  expect_bad([](json& j) { j["nccl"]["channels"] = 65; }, "/nccl/channels", "[1, 64]");
  expect_bad([](json& j) { j["nccl"]["channels"] = 0.5; }, "/nccl/channels", "[1, 64]");
  expect_bad([](json& j) { j["nccl"]["channels"] = "16"; }, "/nccl/channels", "number");
  expect_bad([](json& j) { j["nccl"]["nvls_efficiency"] = 0; }, "/nccl/nvls_efficiency", "(0, 1]");
  expect_bad([](json& j) { j["nccl"]["ll128_efficiency"] = 0; }, "/nccl/ll128_efficiency",
             "positive");
  expect_bad([](json& j) { j["nccl"]["ll128_efficiency"] = 2.5; }, "/nccl/ll128_efficiency",
             "(0, 2]");
  expect_bad([](json& j) { j["nccl"]["ll_intra_efficiency"] = -1; }, "/nccl/ll_intra_efficiency",
             "positive");
  expect_bad([](json& j) { j["nccl"]["ll_intra_efficiency"] = 2.1; }, "/nccl/ll_intra_efficiency",
             "(0, 2]");
  expect_bad([](json& j) { j["nccl"]["arch"] = "ampere"; }, "/nccl/nvls", "hopper");
  expect_bad([](json& j) { j["nccl"]["version"] = "2.17"; }, "/nccl/nvls", "2.18");
  expect_bad([](json& j) { j["nccl"]["launch_us"] = -1; }, "/nccl/launch_us", "negative");
  expect_bad([](json& j) { j["nccl"]["p2p_efficiency"] = 1.5; }, "/nccl/p2p_efficiency", "(0, 1]");
  expect_bad([](json& j) { j["nccl"]["p2p_small_bytes"] = -1; }, "/nccl/p2p_small_bytes",
             "negative");
  expect_bad([](json& j) { j["nccl"]["p2p_small_net_peer_us"] = "x"; },
             "/nccl/p2p_small_net_peer_us", "number");
  expect_bad([](json& j) { j["nccl"]["p2p_net_peer_us"] = -1; }, "/nccl/p2p_net_peer_us",
             "negative");
  expect_bad([](json& j) { j["nccl"].erase("p2p_net_peer_us"); }, "/nccl",
             "missing required key 'p2p_net_peer_us'");
  expect_bad([](json& j) { j["nccl"]["host_cpu"] = "arm"; }, "/nccl/host_cpu",
             "intel, amd or other");
  expect_bad([](json& j) { j["nccl"]["host_cpu"] = 1; }, "/nccl/host_cpu", "must be a string");
  expect_bad([](json& j) { j["nccl"].erase("host_cpu"); }, "/nccl",
             "missing required key 'host_cpu'");
  expect_bad([](json& j) { j["nccl"]["nvls"] = 1; }, "/nccl/nvls", "");
}

TEST_CASE("every shipped profile's compute parameters lie in their documented ranges") {
  // docs/step-model.md, "The compute model"; A100's fitted by scripts/fsdp_validation.py inside
  // these ranges, the others derived.
  for (const auto& path : shipped_cost_profiles()) {
    CAPTURE(path);
    const ComputeParams c = load_cost_profile(path).compute;
    CHECK(c.memory_bound_fraction >= 0.5);
    CHECK(c.memory_bound_fraction <= 0.9);
    CHECK(c.flash_forward_efficiency >= 0.25);
    CHECK(c.flash_forward_efficiency <= 0.73);
    CHECK(c.flash_backward_efficiency <= c.flash_forward_efficiency);
    CHECK(c.flash_seq_half >= 128);
    CHECK(c.flash_seq_half <= 2048);
    CHECK(c.kernel_overhead_s >= 0.5e-6);
    CHECK(c.kernel_overhead_s <= 10e-6);
    CHECK(c.gemm_tile == 128);
    const bool known_sms = c.sm_count == 80 || c.sm_count == 108 || c.sm_count == 132;
    CHECK(known_sms);
  }
}

TEST_CASE("a compute value a profile takes from the A100 fit is the A100 profile's value") {
  // scripts/fsdp_validation.py fits dgx-a100's memory_bound_fraction (and the FlashAttention
  // values) and --write-profile copies them to dgx-a100-40gb and the Polaris profiles; the Hopper
  // profiles take memory_bound_fraction and flash_seq_half from it. A source note that says
  // "A100's fitted value" or "dgx-a100's fitted value" must be true of the number beside it.
  const CostProfile a100 = load_cost_profile(kShipped + "dgx-a100.json");
  int checked = 0;
  for (const auto& path : shipped_cost_profiles()) {
    CAPTURE(path);
    const CostProfile p = load_cost_profile(path);
    const json& src = p.provenance["sources"];
    auto says_a100 = [&](const char* key) {
      if (!src.contains(key) || !src[key].is_string()) return false;
      const std::string note = src[key].get<std::string>();
      return note.find("A100's fitted value") != std::string::npos ||
             note.find("dgx-a100's fitted value") != std::string::npos;
    };
    if (says_a100("compute/memory_bound_fraction")) {
      CHECK(p.compute.memory_bound_fraction == a100.compute.memory_bound_fraction);
      ++checked;
    }
    if (says_a100("compute/flash_forward_efficiency")) {
      CHECK(p.compute.flash_forward_efficiency == a100.compute.flash_forward_efficiency);
      ++checked;
    }
    // flash_seq_half is held at flash-attn 2's 128-row tile wherever a profile explains it so.
    if (src.contains("compute/flash_seq_half") &&
        src["compute/flash_seq_half"].get<std::string>().rfind("128:", 0) == 0) {
      CHECK(p.compute.flash_seq_half == 128);
      ++checked;
    }
  }
  CHECK(checked >= 8);
}

TEST_CASE("every shipped profile parses and documents each parameter's source") {
  auto paths = shipped_cost_profiles();
  REQUIRE(paths.size() >= 4);
  for (const auto& path : paths) {
    CAPTURE(path);
    CostProfile p = load_cost_profile(path);
    CHECK(p.provenance.contains("sources"));
    const json& src = p.provenance["sources"];
    for (const char* key : {"gpu/peak_tflops",
                            "gpu/memory_bytes",
                            "gpu/hbm_GBps",
                            "gemm_efficiency",
                            "attention_efficiency",
                            "compute/sm_count",
                            "compute/gemm_tile",
                            "compute/memory_bound_fraction",
                            "compute/kernel_overhead_us",
                            "kernels/*/throughput_GBps",
                            "kernels/*/launch_us",
                            "optimizer_GBps",
                            "memory_reserved_bytes",
                            "host_op_us",
                            "link_classes/*/hop_latency_us",
                            "link_classes/*/ll_hop_latency_us, ll128_hop_latency_us",
                            "nccl/version",
                            "nccl/arch",
                            "nccl/channels",
                            "nccl/launch_us",
                            "nccl/nvls",
                            "nccl/nvls_efficiency",
                            "nccl/p2p_peer_us",
                            "nccl/p2p_net_peer_us",
                            "nccl/p2p_efficiency",
                            "nccl/host_cpu",
                            "link_classes/nvlink/efficiency",
                            "link_classes/pcie/efficiency",
                            "link_classes/network/efficiency"})
      CHECK_MESSAGE(src.contains(key), key);
    if (p.nccl.nvls) CHECK(src.contains("nccl/nvls_chunk_us"));
    CHECK(to_json(parse_cost_profile(to_json(p), path)) == to_json(p));
  }
}

TEST_CASE("shipped profiles are listed as std::filesystem lists them, sorted") {
  std::vector<std::string> want;
  for (const auto& e : std::filesystem::directory_iterator(kShipped))
    if (e.path().extension() == ".json") want.push_back(e.path().string());
  std::sort(want.begin(), want.end());
  CHECK(shipped_cost_profiles() == want);
  // The selection error lists every shipped profile as "name (gpu model)", comma-separated.
  std::string names;
  for (const auto& path : want) {
    const CostProfile p = load_cost_profile(path);
    names += (names.empty() ? "" : ", ") + p.name + " (" + p.gpu_model + ")";
  }
  const auto e = caught_input_error([] { select_cost_profile_for_gpu("", "MI300X"); });
  CHECK(std::string(e.what()).find("(shipped: " + names + ")") != std::string::npos);
}

TEST_CASE("selection by GPU model, by name and by file") {
  CHECK(select_cost_profile_for_gpu("", "V100-SXM3-32GB").name == "dgx2-v100");
  CHECK(select_cost_profile_for_gpu("", "A100-SXM4-80GB").name == "dgx-a100");
  CHECK(select_cost_profile_for_gpu("", "H100-SXM5-80GB").name == "dgx-h100");
  // H200 has a derived and a measured profile: the measured one wins; --profile picks either.
  CHECK(select_cost_profile_for_gpu("", "H200-SXM-141GB").name == "dgx-h200-measured");
  CHECK(select_cost_profile_for_gpu("dgx-h200", "H200-SXM-141GB").status == "derived");
  // An explicit --profile wins over the GPU model.
  CHECK(select_cost_profile_for_gpu("dgx-a100", "V100-SXM3-32GB").name == "dgx-a100");
  CHECK(select_cost_profile_for_gpu(kShipped + "dgx-h100.json", "V100-SXM3-32GB").gpu_model ==
        "H100-SXM5-80GB");
  // Datasheet values (closed forms: the profile's documented sources).
  CostProfile v = select_cost_profile_for_gpu("dgx2-v100", "");
  CHECK(v.peak_flops == zerosim::testing::Approx(125e12));
  CHECK(v.hbm_Bps == zerosim::testing::Approx(900e9));
}

TEST_CASE("selection failures name --profile") {
  const auto by_gpu = caught_input_error([] { select_cost_profile_for_gpu("", "MI300X"); });
  CHECK(by_gpu.path() == "--profile");
  CHECK(std::string(by_gpu.what()).find("MI300X") != std::string::npos);
  CHECK(std::string(by_gpu.what()).find("dgx-h100") != std::string::npos);
  const auto by_name =
      caught_input_error([] { select_cost_profile_for_gpu("no-such-profile", "H100-SXM5-80GB"); });
  CHECK(by_name.path() == "--profile");
  CHECK(by_name.rule().find("unknown preset") != std::string::npos);
  CHECK_THROWS_AS(select_cost_profile_for_gpu("/nonexistent/p.json", ""), InputError);
}

TEST_CASE("a measured shipped profile names its raw measurements, which are shipped beside it") {
  int measured = 0;
  for (const auto& path : shipped_cost_profiles()) {
    const CostProfile p = load_cost_profile(path);
    if (p.status != "measured") continue;
    ++measured;
    CAPTURE(path);
    REQUIRE(p.provenance.contains("measurements"));
    REQUIRE(p.provenance.contains("fitted"));
    CHECK_FALSE(p.provenance["fitted"].empty());
    for (const auto& m : p.provenance["measurements"]) {
      const std::string file = m["file"].get<std::string>();
      CAPTURE(file);
      CHECK(std::filesystem::exists(std::filesystem::path(ZEROSIM_SOURCE_DIR) / file));
      // The harness recorded the GPU the profile is for.
      CHECK(m["provenance"]["gpu_model"].get<std::string>() == p.gpu_model);
    }
    // Every fitted parameter's source says it was measured.
    for (const auto& key : p.provenance["fitted"])
      CHECK(p.provenance["sources"][key.get<std::string>()].get<std::string>().rfind("measured",
                                                                                     0) == 0);
  }
  CHECK(measured >= 1);
}
