// compare (sim/report/compare.hpp): per-scenario deltas, unmatched scenarios, pairing across what
// each file holds constant or what --by names, and results of one scenario paired whatever
// produced them (a DeepSpeed config file or --strategy).
#include <doctest/doctest.h>

#include <algorithm>

#include "../sweep/fake_results.hpp"
#include "sim/core/error.hpp"
#include "sim/report/compare.hpp"
#include "sim/report/result_view.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
using namespace zerosim::report;

namespace {

bool all_paired(const Comparison& c) {
  return std::all_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) { return r.a && r.b; });
}

// ZeRO-3 and ZeRO++ on 2 DGX-2 nodes (analytic tier), from `flag` with `values`.
std::vector<ResultView> paper_scenarios(const std::string& flag,
                                        const std::vector<std::string>& values) {
  std::vector<ResultView> out;
  for (const Scenario& s : sweep::expand(Scenario{}, {{"--cluster", {"dgx2-v100"}},
                                                      {"--nodes", {"2"}},
                                                      {"--model", {"gpt-18b"}},
                                                      {"--tokens-per-gpu", {"1024"}},
                                                      {"--tier", {"analytic"}},
                                                      {flag, values}}))
    out.push_back(view_of(simulate(s)));
  return out;
}

}  // namespace

TEST_CASE("compare: per-scenario deltas and unmatched scenarios") {
  auto a = read_results(testing::fake_paper_sweep(), "a.json");
  json docb = testing::fake_paper_sweep();
  // B: scenario 0 is 10% slower (step x 1.1, TFLOPs / 1.1); scenario 1 removed.
  docb["results"][0]["step_time_s"] = docb["results"][0]["step_time_s"].get<double>() * 1.1;
  docb["results"][0]["tflops_per_gpu"] = docb["results"][0]["tflops_per_gpu"].get<double>() / 1.1;
  docb["results"].erase(1);
  auto b = read_results(docb, "b.json");
  const Comparison cmp = compare_results(a, b);
  const auto& rows = cmp.rows;
  CHECK(cmp.across.empty());
  REQUIRE(rows.size() == 40u);
  CHECK(rows[0].step_delta_pct() == zerosim::testing::Approx(10.0).epsilon(1e-9));
  CHECK(rows[0].tflops_delta_pct() == zerosim::testing::Approx(100.0 / 1.1 - 100.0).epsilon(1e-9));
  CHECK(rows[1].b == nullptr);
  CHECK(rows[2].step_delta_pct() == 0.0);
  std::string text = render_compare(cmp, "a.json", "b.json");
  CHECK(text.find("| +10.00% |") != std::string::npos);
  CHECK(text.find("39 matched, 1 only in A, 0 only in B") != std::string::npos);
}

TEST_CASE("compare matches across what each file holds constant, or what --by names") {
  auto a = read_results(testing::fake_paper_sweep(), "a.json");
  json docb = testing::fake_paper_sweep();
  for (auto& r : docb["results"]) r["scenario"]["tier"] = "analytic";
  docb["results"][0]["step_time_s"] = docb["results"][0]["step_time_s"].get<double>() * 2;
  auto b = read_results(docb, "b.json");
  REQUIRE(a.front().identity.find("\"tier\":\"flow\"") != std::string::npos);
  // Nothing matches as it is; tier is constant in each file and differs: matched without it.
  const Comparison found = compare_results(a, b);
  CHECK(found.across == std::vector<std::string>{"tier"});
  CHECK(found.found == "tier: \"flow\" vs \"analytic\"");
  REQUIRE(found.rows.size() == 40u);
  CHECK(found.rows[0].step_delta_pct() == zerosim::testing::Approx(100.0));
  const std::string text = render_compare(found, "a.json", "b.json");
  CHECK(text.find("tier: \"flow\" vs \"analytic\"") != std::string::npos);
  CHECK(text.find("40 matched, 0 only in A, 0 only in B") != std::string::npos);
  // Named explicitly: the same matches, said as asked.
  const Comparison named = compare_results(a, b, {"tier"});
  CHECK(named.found.empty());
  CHECK(named.rows.size() == 40u);
  CHECK(render_compare(named, "a", "b").find("Paired across: tier.") != std::string::npos);
  // A file against itself matches every scenario.
  const Comparison self = compare_results(a, a);
  CHECK(self.across.empty());
  CHECK(std::all_of(self.rows.begin(), self.rows.end(),
                    [](const CompareRow& r) { return r.a && r.b; }));
  CHECK_THROWS_AS(compare_results(a, b, {"no_such_key"}), InputError);
}

TEST_CASE("compare pairs a DeepSpeed config's results with --strategy runs of the same scenario") {
  const std::string dir = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/";
  // Configs with DeepSpeed's defaults (FP16 as on V100, hpZ within the 16-GPU node): the same
  // scenarios as --strategy's, only their source differs.
  const ScratchDir scratch("compare");
  const std::string zero3 = (scratch.path / "zero3.json").string(),
                    zeropp = (scratch.path / "zeropp.json").string();
  spit(zero3, R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3}})");
  spit(zeropp, R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3,
      "zero_quantized_weights": true, "zero_hpz_partition_size": 16,
      "zero_quantized_gradients": true}})");
  const auto defaults = paper_scenarios("--deepspeed", {zero3, zeropp});
  const auto flags = paper_scenarios("--strategy", {"zero3", "zeropp"});
  const Comparison same = compare_results(defaults, flags);
  CHECK(same.across.empty());
  REQUIRE(same.rows.size() == 2u);
  CHECK(all_paired(same));
  for (const CompareRow& r : same.rows) {
    CHECK(r.a->strategy == r.b->strategy);
    CHECK(r.step_delta_pct() == 0.0);  // one scenario, bit-identical results
  }
  // The paper's configs change the buckets (reduce_bucket_size 1e7, no prefetch bucket): paired
  // across them, named with their values.
  const auto paper = paper_scenarios(
      "--deepspeed", {dir + "zeropp-paper-zero3.json", dir + "zeropp-paper-zeropp.json"});
  const Comparison across = compare_results(paper, flags);
  REQUIRE(across.rows.size() == 2u);
  CHECK(all_paired(across));
  for (const CompareRow& r : across.rows) CHECK(r.a->strategy == r.b->strategy);
  CHECK(std::find(across.across.begin(), across.across.end(), "strategy.reduce_bucket_elems") !=
        across.across.end());
  CHECK(across.found.find("strategy.reduce_bucket_elems: 10000000 vs 500000000") !=
        std::string::npos);
  CHECK(render_compare(across, "paper.json", "flags.json").find("2 matched, 0 only in A") !=
        std::string::npos);
  // Named as nested keys, the same pairs.
  const Comparison named = compare_results(
      paper, flags,
      {"prefetch_depth", "strategy.reduce_bucket_elems", "strategy.prefetch_bucket_elems"});
  CHECK(named.found.empty());
  CHECK(all_paired(named));
  CHECK_THROWS_AS(compare_results(paper, flags, {"strategy.no_such_key"}), InputError);
}
