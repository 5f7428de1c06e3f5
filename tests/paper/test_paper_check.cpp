// The paper check: the ZeRO++ paper's two published 384-GPU throughput tables (IB: 4 and IB: 1,
// tests/paper/zeropp_published_384.json with its citation and tolerances) against the simulator
// with the shipped dgx2-v100 profile (every published configuration must also fit in the GPUs'
// memory: the runs happened; with DeepSpeed's default prefetch the largest would not have), and
// that profile's fitted parameters against their documented ranges. One tolerance for every cell:
// issue 45's targets (mean 5%, 10% per throughput and per speedup), which the model misses (the
// case says so and fails once they are met). The last case proves the check can fail and that
// the shipped profile is the fit's optimum: perturbed (the network 20% faster, no host dispatch
// time, 50% more), the mean error grows.
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
  s.tier = NetworkTier::Flow;
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

// Runs every cell; returns the values outside the table's one tolerance and, as a last entry
// named "mean", the mean |error| of the 64 TFLOPs (always). stop_early: return at the first miss.
std::vector<Miss> check(const std::string& profile, bool stop_early) {
  const json t = published();
  const json& tol = t["tolerance"];
  const double tol_tflops = tol["tflops_rel"].get<double>();
  const double tol_speedup = tol["speedup_rel"].get<double>();
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
      if (std::abs(v.rel_error) > (speedup ? tol_speedup : tol_tflops)) misses.push_back(v);
    }
    if (stop_early && !misses.empty()) return misses;
  }
  misses.push_back({"mean", 0, 0, sum / n});
  return misses;
}

double mean_error(const std::vector<Miss>& misses) { return misses.back().rel_error; }

std::string write_perturbed_profile(const std::string& name, void (*perturb)(json&)) {
  json p = load_json_file(kRoot + "/calibrate/profiles/dgx2-v100.json");
  perturb(p);
  const auto path = std::filesystem::temp_directory_path() /
                    ("zerosim-paper-" + name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << p.dump(2);
  return path.string();
}

}  // namespace

// The targets (one tolerance for every cell) are not met by the model with DeepSpeed's
// identified mechanisms only (docs/step-model.md, "The V100 fit"): the misses are reported, and
// this case fails once they are met, so that the finding is revisited.
TEST_CASE("the shipped V100 profile against the paper check's one tolerance" *
          doctest::should_fail()) {
  const json t = published();
  REQUIRE(t["cells"].size() == 8);      // IB: 4: 4 models x 2 micro-batch sizes
  REQUIRE(t["cells_ib1"].size() == 8);  // IB: 1: the same
  const auto misses = check("", false);
  const double tol_mean = t["tolerance"]["mean_tflops_rel"].get<double>();
  for (const auto& m : misses)
    if (m.what != "mean")
      FAIL_CHECK(m.what << ": published " << m.published << ", simulated " << m.simulated
                        << " (error " << 100 * m.rel_error << "%)");
  CHECK(mean_error(misses) <= tol_mean);
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

TEST_CASE("the shipped V100 profile is the fit's optimum: perturbed, the mean error grows") {
  // The fitted parameters moved inside their ranges, and a profile with no host dispatch time:
  // each check can fail (the mean |error| must grow), and the shipped profile is where the fit
  // put it.
  const double shipped = mean_error(check("", false));
  const auto slow_net = write_perturbed_profile("net", [](json& p) {
    auto& e = p["link_classes"]["network"]["efficiency"];
    e = e.get<double>() * 1.2;
  });
  const auto no_fetch = write_perturbed_profile("fetch", [](json& p) { p["host_op_us"] = 0; });
  const auto slow_host = write_perturbed_profile(
      "host", [](json& p) { p["host_op_us"] = p["host_op_us"].get<double>() * 1.5; });
  for (const auto& f : {slow_net, no_fetch, slow_host}) {
    CAPTURE(f);
    CHECK(mean_error(check(f, false)) > shipped);
    std::filesystem::remove(f);
  }
}
