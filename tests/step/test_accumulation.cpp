// Gradient accumulation (sim/step/accumulation.hpp): a step of G >= 3 micro-steps extended from
// runs of one and two equals the step with every micro-step lowered (ReferenceModes
// extend_accumulation = false) to rounding, part by part, on both tiers and with hpZ (whose first
// micro-step differs); the work done does not grow with G; a trace says what it leaves out.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/step/accumulation.hpp"
#include "sim/step/simulate.hpp"
#include "tests/step/gpt18b_setup.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;

namespace {

Scenario scenario(const std::string& strategy, NetworkTier tier, int grad_accum) {
  return gpt18b_h100_scenario(strategy, tier, grad_accum);
}

StepResult lowered_in_full(const Scenario& sc) {
  ReferenceModes modes;
  modes.extend_accumulation = false;
  SimContext context(modes);
  return simulate(sc, context);
}

void check_close(double extended, double full, const char* what) {
  CAPTURE(what);
  CHECK(std::abs(extended - full) <= 1e-12 * std::max(1.0, std::abs(full)));
}

void check_totals(const CommTotals& a, const CommTotals& b) {
  check_close(a.inter_node_bytes, b.inter_node_bytes, "inter_node_bytes");
  check_close(a.intra_node_bytes, b.intra_node_bytes, "intra_node_bytes");
  CHECK(a.count == b.count);
  check_close(a.busy_s, b.busy_s, "busy_s");
}

}  // namespace

TEST_CASE("x(G) = x(1) + (G - 1)(x(2) - x(1))") {
  CHECK(extend_accumulation(2.0, 3.5, 5) == 2.0 + 4 * 1.5);
  CHECK(extend_accumulation(std::uint64_t{7}, std::uint64_t{10}, 1000000000) ==
        std::uint64_t{7} + std::uint64_t{999999999} * 3);
  CommResult one, two;
  one.by_phase["forward_all_gather"] = CommTotals{10, 20, 1, 0.5};
  two.by_phase["forward_all_gather"] = CommTotals{30, 20, 3, 1.0};
  two.by_phase["backward_all_gather"] = CommTotals{5, 0, 1, 0.25};  // only from micro-step 1 on
  const CommResult g4 = extend_accumulation(one, two, 4);
  CHECK(g4.by_phase.at("forward_all_gather") == CommTotals{70, 20, 7, 2.0});
  CHECK(g4.by_phase.at("backward_all_gather") == CommTotals{15, 0, 3, 0.75});
}

TEST_CASE("an extended step equals the step with every micro-step lowered") {
  for (const NetworkTier tier : {NetworkTier::Flow, NetworkTier::Analytic})
    for (const char* strategy : {"zero3", "zeropp"})
      for (int g : {3, 5}) {
        const Scenario sc = scenario(strategy, tier, g);
        CAPTURE(tier);
        CAPTURE(strategy);
        CAPTURE(g);
        const StepResult ext = simulate(sc), full = lowered_in_full(sc);
        check_close(ext.step_time_s, full.step_time_s, "step_time_s");
        check_close(ext.tflops_per_gpu, full.tflops_per_gpu, "tflops_per_gpu");
        const StepTimeBreakdown &a = ext.breakdown, &b = full.breakdown;
        check_close(a.compute_s, b.compute_s, "compute_s");
        check_close(a.recompute_s, b.recompute_s, "recompute_s");
        check_close(a.param_fetch_s, b.param_fetch_s, "param_fetch_s");
        check_close(a.quant_kernels_s, b.quant_kernels_s, "quant_kernels_s");
        check_close(a.other_kernels_s, b.other_kernels_s, "other_kernels_s");
        check_close(a.exposed_comm.total_s, b.exposed_comm.total_s, "exposed total");
        check_close(a.exposed_comm.all_gather_s, b.exposed_comm.all_gather_s, "exposed ag");
        check_close(a.exposed_comm.all_to_all_s, b.exposed_comm.all_to_all_s, "exposed a2a");
        check_close(a.exposed_kernels_s, b.exposed_kernels_s, "exposed kernels");
        check_close(a.idle_s, b.idle_s, "idle_s");
        check_close(ext.comm.inter_node_bytes, full.comm.inter_node_bytes, "inter bytes");
        CHECK(ext.comm.collectives == full.comm.collectives);
        CHECK(ext.comm.flows == full.comm.flows);
        REQUIRE(ext.comm.by_phase.size() == full.comm.by_phase.size());
        for (const auto& kv : full.comm.by_phase) {
          // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
          const auto& phase = kv.first;
          const auto& t = kv.second;
          CAPTURE(phase);
          check_totals(ext.comm.by_phase.at(phase), t);
        }
        for (const auto& kv : full.comm.by_collective) {
          // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
          const auto& kind = kv.first;
          const auto& t = kv.second;
          CAPTURE(kind);
          check_totals(ext.comm.by_collective.at(kind), t);
        }
        CHECK(ext.memory.peak_bytes == full.memory.peak_bytes);
        CHECK(ext.scenario.grad_accum == g);
      }
}

TEST_CASE("the work of a step does not grow with its accumulation count") {
  // Events processed: runs of one and two micro-steps, whatever G is.
  const StepResult g3 = simulate(scenario("zeropp", NetworkTier::Flow, 3));
  const StepResult big = simulate(scenario("zeropp", NetworkTier::Flow, 100000));
  CHECK(big.engine_events == g3.engine_events);
  // And the step is the first micro-step plus 99999 of the second.
  const StepResult one = simulate(scenario("zeropp", NetworkTier::Flow, 1));
  const StepResult two = simulate(scenario("zeropp", NetworkTier::Flow, 2));
  check_close(big.step_time_s, one.step_time_s + 99999 * (two.step_time_s - one.step_time_s),
              "step_time_s");
  CHECK(big.comm.collectives ==
        one.comm.collectives + 99999 * (two.comm.collectives - one.comm.collectives));
}

TEST_CASE("the trace of an extended step says which micro-steps it draws") {
  const auto dir = temp_dir("accumulation-trace");
  const std::string path = (dir / "t.json").string();
  simulate(scenario("zeropp", NetworkTier::Analytic, 5), path);
  const json five = parse_json_text(slurp(path), path);
  CHECK(five["otherData"]["note"].get<std::string>().find("micro-steps 2..4 repeat") !=
        std::string::npos);
  simulate(scenario("zeropp", NetworkTier::Analytic, 2), path);
  CHECK_FALSE(parse_json_text(slurp(path), path)["otherData"].contains("note"));
}
