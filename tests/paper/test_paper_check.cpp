// The paper check: the ZeRO++ paper's two published 384-GPU throughput tables (IB: 4 and IB: 1,
// tests/paper/zeropp_published_384.json with its citation and tolerances) against the simulator
// with the shipped dgx2-v100 profile (every published configuration must also fit in the GPUs'
// memory: the runs happened; with DeepSpeed's default prefetch the largest would not have), and
// that profile's fitted parameters against their documented ranges. The tolerances are issue 19's
// targets (mean 5%, 10% per throughput and per speedup) except for the JSON's known misses, cells
// whose published runs show an overlap the model lacks: they have regression bounds of their own
// and must stay below the published values. The last case proves the check can fail: the profile
// perturbed (the network at half its rate, GEMMs 20% slower, no host dispatch time) must report
// cells out of tolerance.
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
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {

const std::string kRoot = ZEROSIM_SOURCE_DIR;

json published() { return load_json_file(kRoot + "/tests/paper/zeropp_published_384.json"); }

// `deepspeed`: a config file instead of the table's for `strategy`.
StepResult simulated(const json& table, const json& cell, const std::string& strategy,
                     const std::string& profile, const std::string& deepspeed = "") {
  Scenario s;
  s.cluster = table["cluster"]["preset"].get<std::string>();
  s.nodes = table["cluster"]["nodes"].get<int>();
  s.nics_per_node = cell["ib"].get<int>();
  s.nic_gbps = table["cluster"]["nic_gbps"].get<double>();
  s.model = cell["model"].get<std::string>();
  s.deepspeed =
      deepspeed.empty() ? kRoot + "/" + table["deepspeed"][strategy].get<std::string>() : deepspeed;
  s.tokens_per_gpu = cell["tokens_per_gpu"].get<int>();
  s.deepspeed_version = table["deepspeed_version"].get<std::string>();
  s.profile = profile;
  s.tier = "flow";
  return simulate(s);
}

struct Miss {
  std::string what;
  double published, simulated, rel_error;
};

// Every cell of both tables, with the table's NIC count as "ib".
std::vector<json> all_cells(const json& t) {
  std::vector<json> cells;
  for (const char* key : {"cells", "cells_ib1"})
    for (json c : t[key]) {
      c["ib"] = std::string(key) == "cells" ? 4 : 1;
      cells.push_back(c);
    }
  return cells;
}

// The known miss `cell` is listed under (tolerance/known_misses), or null.
const json* known_miss(const json& t, const json& cell) {
  for (const json& k : t["tolerance"]["known_misses"])
    if (k["ib"] == cell["ib"] && k["model"] == cell["model"]) return &k;
  return nullptr;
}

// Runs every cell; returns the values outside tolerance (a known miss's throughputs also when
// simulated above published), and (as a last entry named "mean") the mean |error| of TFLOPs when
// it exceeds its bound. stop_early: return at the first miss.
std::vector<Miss> check(const std::string& profile, bool stop_early) {
  const json t = published();
  const double tol_mean = t["tolerance"]["mean_tflops_rel"].get<double>();
  std::vector<Miss> misses;
  double sum = 0;
  int n = 0;
  for (const auto& cell : all_cells(t)) {
    const std::string name = "IB: " + std::to_string(cell["ib"].get<int>()) + " " +
                             cell["model"].get<std::string>() + " " +
                             std::to_string(cell["tokens_per_gpu"].get<int>()) + " tokens/GPU";
    const double p3 = cell["zero3_tflops"].get<double>(), pp = cell["zeropp_tflops"].get<double>();
    const StepResult r3 = simulated(t, cell, "zero3", profile);
    const StepResult rp = simulated(t, cell, "zeropp", profile);
    const double s3 = r3.tflops_per_gpu, sp = rp.tflops_per_gpu;
    const json* known = known_miss(t, cell);
    const json& tol = known ? *known : t["tolerance"];
    const double tol_tflops = tol["tflops_rel"].get<double>();
    const double tol_speedup = tol["speedup_rel"].get<double>();
    // The published runs ran: their configurations fit in the GPUs' memory.
    for (const StepResult* r : {&r3, &rp})
      if (!r->memory.fits)
        misses.push_back({name + (r == &r3 ? " ZeRO-3" : " ZeRO++") +
                              " memory in GiB, GPU capacity as 'published' (" + r->memory.warning +
                              ")",
                          r->memory.capacity_bytes / (1 << 30), r->memory.peak_bytes / (1 << 30),
                          r->memory.peak_bytes / r->memory.capacity_bytes - 1});
    const Miss values[] = {{name + " ZeRO-3 TFLOPs", p3, s3, s3 / p3 - 1},
                           {name + " ZeRO++ TFLOPs", pp, sp, sp / pp - 1},
                           {name + " speedup", pp / p3, sp / s3, (sp / s3) / (pp / p3) - 1}};
    for (const auto& v : values) {
      const bool speedup = v.what.find("speedup") != std::string::npos;
      if (!speedup) sum += std::abs(v.rel_error), ++n;
      if (std::abs(v.rel_error) > (speedup ? tol_speedup : tol_tflops) ||
          (known && !speedup && v.rel_error >= 0))
        misses.push_back(v);
    }
    if (stop_early && !misses.empty()) return misses;
  }
  if (sum / n > tol_mean) misses.push_back({"mean", 0, 0, sum / n});
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

TEST_CASE("the shipped V100 profile is within the paper check's bounds on both published tables") {
  const json t = published();
  REQUIRE(t["cells"].size() == 8);      // IB: 4: 4 models x 2 micro-batch sizes
  REQUIRE(t["cells_ib1"].size() == 8);  // IB: 1: the same
  for (const auto& m : check("", false))
    FAIL_CHECK(m.what << ": published " << m.published << ", simulated " << m.simulated
                      << " (error " << 100 * m.rel_error << "%)");
}

TEST_CASE("with DeepSpeed's default prefetch the largest published run would not have fit") {
  // The evidence for the paper configs' stage3_prefetch_bucket_size 0 that does not come from the
  // throughput fit: gpt-138b's ZeRO++ at 2K tokens per GPU ran on 32 GiB V100s, and prefetching
  // the next module's weights (FP16 and INT8) puts it over 32 GiB even with no memory reserve.
  const json t = published();
  json ds = load_json_file(kRoot + "/" + t["deepspeed"]["zeropp"].get<std::string>());
  REQUIRE(ds["zero_optimization"].erase("stage3_prefetch_bucket_size") == 1);
  const auto path = std::filesystem::temp_directory_path() /
                    ("zerosim-paper-default-prefetch-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << ds.dump(2);
  json cell;
  for (const json& c : all_cells(t))
    if (c["model"] == "gpt-138b" && c["tokens_per_gpu"] == 2048 && c["ib"] == 4) cell = c;
  REQUIRE(cell.is_object());
  const StepResult with_prefetch = simulated(t, cell, "zeropp", "", path.string());
  std::filesystem::remove(path);
  CHECK(simulated(t, cell, "zeropp", "").memory.fits);
  const MemoryEstimate& m = with_prefetch.memory;
  CHECK(m.peak_bytes - m.component("reserved") > m.capacity_bytes);
}

TEST_CASE("the V100 profile's fitted parameters are inside their documented ranges") {
  const json p = load_json_file(kRoot + "/calibrate/profiles/dgx2-v100.json");
  const json& fit = p["provenance"]["fit"]["parameters"];
  REQUIRE(fit.size() == 3);
  const double hbm = p["gpu"]["hbm_GBps"].get<double>();
  for (const auto& f : fit) {
    const std::string name = f["name"].get<std::string>();
    const double v = f["value"].get<double>();
    CAPTURE(name);
    CHECK(v >= f["range"][0].get<double>());
    CHECK(v <= f["range"][1].get<double>());
    CHECK(!f["evidence"].get<std::string>().empty());
    // The profile holds the fitted value.
    if (name == "network_efficiency")
      CHECK(p["link_classes"]["network"]["efficiency"].get<double>() ==
            zerosim::testing::Approx(v));
    else if (name == "quant_hbm_fraction")
      CHECK(p["kernels"]["quantize_int8"]["throughput_GBps"].get<double>() ==
            zerosim::testing::Approx(v * hbm).epsilon(1e-6));
    else if (name == "host_op_us")
      CHECK(p["host_op_us"].get<double>() == zerosim::testing::Approx(v));
    else
      FAIL_CHECK("unknown fitted parameter " << name);
  }
}

TEST_CASE("the paper check fails when the profile is perturbed") {
  // The network at half its fitted rate: ZeRO-3 much too slow at both bandwidths.
  const auto slow_net = write_perturbed_profile("net", [](json& p) {
    auto& e = p["link_classes"]["network"]["efficiency"];
    e = e.get<double>() / 2;
  });
  CHECK(!check(slow_net, true).empty());
  // GEMMs 20% less efficient: every cell slows down.
  const auto slow_gemm = write_perturbed_profile("gemm", [](json& p) {
    for (auto& pt : p["gemm_efficiency"]) pt["efficiency"] = pt["efficiency"].get<double>() * 0.8;
  });
  CHECK(!check(slow_gemm, true).empty());
  // No host time per dispatched op: DeepSpeed's re-assembly of the gathered parameters free.
  const auto no_fetch = write_perturbed_profile("fetch", [](json& p) { p["host_op_us"] = 0; });
  CHECK(!check(no_fetch, true).empty());
  for (const auto& f : {slow_net, slow_gemm, no_fetch}) std::filesystem::remove(f);
}
