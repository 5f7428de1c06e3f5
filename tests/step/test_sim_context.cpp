// SimContext (sim/step/sim_context.hpp): results never depend on the context. A warm context, a
// fresh one per call and the lowering reference mode give the same bytes, scenario by scenario
// and for a whole sweep whose programs are re-timed across tokens and networks.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

using namespace zerosim;

namespace {

// Tokens vary outside the network and strategy axes, so programs are re-timed and shared.
std::vector<Scenario> grid() {
  Scenario base;
  base.cluster = "dgx-h100";
  base.nodes = 2;
  base.model = "gpt-18b";
  base.tier = "analytic";
  return sweep::expand(base, {{"--tokens-per-gpu", {"1024", "4096", "2048"}},
                              {"--grad-accum", {"1", "2"}},
                              {"--nic-gbps", {"100", "400"}},
                              {"--strategy", {"zero3", "zeropp", "zero3+qgz"}},
                              {"--qgz-chunks", {"1", "2"}}});
}

std::string sweep_text(const std::vector<Scenario>& s, const ReferenceModes& modes) {
  std::vector<std::size_t> all(s.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  sweep::RunOptions options;
  options.threads = 1;
  options.modes = modes;
  std::vector<StepResult> results;
  for (auto& r : sweep::run_scenarios(s, all, sweep::simulate_runner(), options))
    results.push_back(std::move(*r));
  return sweep::sweep_document(json::object(), results).dump();
}

}  // namespace

TEST_CASE("a warm context gives what a fresh one gives, scenario by scenario") {
  const std::vector<Scenario> s = grid();
  REQUIRE(s.size() == 72u);
  SimContext warm;
  for (const Scenario& sc : s) {
    CAPTURE(sweep::scenario_label(sc));
    const StepResult a = simulate(sc, warm);
    CHECK(a == simulate(sc));
  }
}

TEST_CASE("reusing lowered programs across tokens and networks changes no byte of a sweep") {
  const std::vector<Scenario> s = grid();
  const std::string reused = sweep_text(s, {});
  CHECK(reused.size() > 10000);
  ReferenceModes fresh;
  fresh.lowering_reuse = false;
  CHECK(reused == sweep_text(s, fresh));
}
