// What to change when a configuration does not fit (sim/plan/no_fit_advice.cpp), on real simulated
// steps: which model states more GPUs divide per ZeRO stage, and that the node count it names is
// the smallest that fits.
#include <doctest/doctest.h>

#include <string>

#include "../support/paper_scenario.hpp"
#include "sim/plan/no_fit_advice.hpp"

using namespace zerosim;

namespace {

StepResult on_nodes(const std::string& strategy, const std::string& model, int nodes) {
  Scenario s = paper_scenario(strategy);
  s.model = model;
  s.nodes = nodes;
  return simulate(s);
}

}  // namespace

TEST_CASE(
    "the sharded model states per ZeRO stage: optimizer (1), + gradients (2), + weights (3)") {
  for (const char* strategy : {"zero1", "zero2", "zero3", "hsdp"}) {
    CAPTURE(strategy);
    const StepResult r = on_nodes(strategy, "gpt-18b", 2);
    const MemoryEstimate& m = r.memory;
    const double optimizer = m.component("optimizer_fp32"), grads = m.component("grads_fp16"),
                 weights = m.component("params_fp16");
    const std::string st = strategy;
    const double expected = st == "hsdp"    ? 0
                            : st == "zero1" ? optimizer
                            : st == "zero2" ? optimizer + grads
                                            : optimizer + grads + weights;
    CHECK(plan::sharded_bytes(r) == expected);
  }
}

TEST_CASE("nodes_to_fit names the fewest nodes on which ZeRO-3 fits") {
  // gpt-91b's model states (16 bytes per parameter) need about 46 V100s' memory.
  const StepResult r = on_nodes("zero3", "gpt-91b", 1);
  REQUIRE_FALSE(r.memory.fits);
  const long long n = plan::nodes_to_fit(r);
  REQUIRE(n > 1);
  CHECK(on_nodes("zero3", "gpt-91b", static_cast<int>(n)).memory.fits);
  CHECK_FALSE(on_nodes("zero3", "gpt-91b", static_cast<int>(n) - 1).memory.fits);
  CHECK(plan::ways_to_fit(r).find("--nodes " + std::to_string(n) + " (or more)") !=
        std::string::npos);
}

TEST_CASE("ZeRO-1 keeps whole FP16 weights and gradients: no node count fits, ZeRO-3 is named") {
  const StepResult r = on_nodes("zero1", "gpt-18b", 1);
  REQUIRE_FALSE(r.memory.fits);
  CHECK(plan::nodes_to_fit(r) == 0);
  CHECK_FALSE(on_nodes("zero1", "gpt-18b", 64).memory.fits);
  const std::string advice = plan::ways_to_fit(r);
  CHECK(advice.find("more nodes cannot make it fit") != std::string::npos);
  CHECK(advice.find("--strategy zero3") != std::string::npos);
}
