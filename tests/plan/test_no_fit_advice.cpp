// What to change when a configuration does not fit (sim/plan/no_fit_advice.cpp), on real simulated
// steps: the model states it counts as sharded are exactly what more GPUs divide, and the node
// count it names is the smallest that fits.
#include <doctest/doctest.h>

#include <string>

#include "../support/paper_scenario.hpp"
#include "sim/plan/no_fit_advice.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {

// Simulated even where no node count fits (ZeRO-1's whole FP16 model): the advice reads such
// results, which simulate() otherwise refuses before running.
StepResult on_nodes(const std::string& strategy, const std::string& model, int nodes) {
  Scenario s = paper_scenario(strategy);
  s.model = model;
  s.nodes = nodes;
  ReferenceModes modes;
  modes.refuse_unfit_early = false;
  SimContext context(modes);
  return simulate(s, context);
}

}  // namespace

TEST_CASE("the sharded bytes are what doubling the GPUs halves; the rest does not change") {
  // Per ZeRO stage the memory model divides different model states over the world (stage 1 the
  // optimizer states, 2 also the gradients, 3 also the weights; HSDP only within its node), so
  // this holds only if sharded_bytes picks the right ones for each.
  for (const char* strategy : {"zero1", "zero2", "zero3", "hsdp"}) {
    CAPTURE(strategy);
    const StepResult two = on_nodes(strategy, "gpt-18b", 2),
                     four = on_nodes(strategy, "gpt-18b", 4);
    const double s2 = plan::sharded_bytes(two), s4 = plan::sharded_bytes(four);
    CHECK(s2 == zerosim::testing::Approx(2 * s4).epsilon(1e-12));
    CHECK(two.memory.peak_bytes - s2 ==
          zerosim::testing::Approx(four.memory.peak_bytes - s4).epsilon(1e-12));
    CHECK((s2 > 0) == (std::string(strategy) != "hsdp"));
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
