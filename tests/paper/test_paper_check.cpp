// The paper check (issue 7): the ZeRO++ paper's published 384-GPU throughput table
// (tests/paper/zeropp_published_384.json, with its citation and tolerances) against the simulator
// with the shipped dgx2-v100 profile. Every cell's TFLOPs/GPU and every ZeRO++/ZeRO-3 speedup must
// be within tolerance. The second case proves the check can fail: the same check with the profile
// perturbed (the pre-fit network efficiency, or GEMMs 20% slower) must report cells out of
// tolerance.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"

using namespace zerosim;

namespace {

const std::string kRoot = ZEROSIM_SOURCE_DIR;

json published() { return load_json_file(kRoot + "/tests/paper/zeropp_published_384.json"); }

double simulated_tflops(const json& table, const json& cell, const std::string& strategy,
                        const std::string& profile) {
  Scenario s;
  s.cluster = table["cluster"]["preset"].get<std::string>();
  s.nodes = table["cluster"]["nodes"].get<int>();
  s.nics_per_node = table["cluster"]["nics_per_node"].get<int>();
  s.nic_gbps = table["cluster"]["nic_gbps"].get<double>();
  s.model = cell["model"].get<std::string>();
  s.deepspeed = kRoot + "/" + table["deepspeed"][strategy].get<std::string>();
  s.tokens_per_gpu = cell["tokens_per_gpu"].get<int>();
  s.profile = profile;
  s.tier = "flow";
  return simulate(s)["tflops_per_gpu"].get<double>();
}

struct Miss {
  std::string what;
  double published, simulated, rel_error;
};

// Runs every cell; returns the values outside tolerance. stop_early: return at the first miss.
std::vector<Miss> check(const std::string& profile, bool stop_early) {
  const json t = published();
  const double tol_tflops = t["tolerance"]["tflops_rel"].get<double>();
  const double tol_speedup = t["tolerance"]["speedup_rel"].get<double>();
  std::vector<Miss> misses;
  for (const auto& cell : t["cells"]) {
    const std::string name = cell["model"].get<std::string>() + " " +
                             std::to_string(cell["tokens_per_gpu"].get<int>()) + " tokens/GPU";
    const double p3 = cell["zero3_tflops"].get<double>(), pp = cell["zeropp_tflops"].get<double>();
    const double s3 = simulated_tflops(t, cell, "zero3", profile);
    const double sp = simulated_tflops(t, cell, "zeropp", profile);
    const Miss values[] = {{name + " ZeRO-3 TFLOPs", p3, s3, s3 / p3 - 1},
                           {name + " ZeRO++ TFLOPs", pp, sp, sp / pp - 1},
                           {name + " speedup", pp / p3, sp / s3, (sp / s3) / (pp / p3) - 1}};
    for (const auto& v : values) {
      const double tol = v.what.find("speedup") != std::string::npos ? tol_speedup : tol_tflops;
      if (std::abs(v.rel_error) > tol) misses.push_back(v);
    }
    if (stop_early && !misses.empty()) break;
  }
  return misses;
}

std::string write_perturbed_profile(const std::string& name, void (*perturb)(json&)) {
  json p = load_json_file(kRoot + "/calibrate/profiles/dgx2-v100.json");
  perturb(p);
  const auto path = std::filesystem::temp_directory_path() /
                    ("zerosim-paper-" + name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << p.dump(2);
  return path.string();
}

}  // namespace

TEST_CASE("the shipped V100 profile reproduces the ZeRO++ paper's 384-GPU table") {
  const json t = published();
  REQUIRE(t["cells"].size() == 8);  // 4 models x 2 micro-batch sizes, ZeRO-3 and ZeRO++ each
  CHECK(t["tolerance"]["tflops_rel"].get<double>() == 0.10);
  CHECK(t["tolerance"]["speedup_rel"].get<double>() == 0.10);
  for (const auto& m : check("", false))
    FAIL_CHECK(m.what << ": published " << m.published << ", simulated " << m.simulated
                      << " (error " << 100 * m.rel_error << "%)");
}

TEST_CASE("the paper check fails when the profile is perturbed") {
  // The network efficiency before the fit (the nccl-tests-derived 0.9): communication becomes
  // cheap and ZeRO-3 much too fast.
  const auto fast_net = write_perturbed_profile(
      "net", [](json& p) { p["link_classes"]["network"]["efficiency"] = 0.9; });
  CHECK(!check(fast_net, true).empty());
  // GEMMs 20% less efficient: every cell slows down.
  const auto slow_gemm = write_perturbed_profile("gemm", [](json& p) {
    for (auto& pt : p["gemm_efficiency"]) pt["efficiency"] = pt["efficiency"].get<double>() * 0.8;
  });
  CHECK(!check(slow_gemm, true).empty());
  std::filesystem::remove(fast_net);
  std::filesystem::remove(slow_gemm);
}
