// SimContext (sim/step/sim_context.hpp): results never depend on the context. A warm context, a
// fresh one per call and the reference modes give the same bytes, scenario by scenario and for a
// whole sweep whose programs are re-timed across tokens and networks; an input file changed between
// two calls is read again by the next one; two contexts share no cached object.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "sim/profile/cost_profile.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;

namespace {

// Tokens vary outside the network and strategy axes, so programs are re-timed and shared; G = 4 is
// extended from the runs of G = 1 and 2 (accumulation.hpp), which a warm context has kept
// (RunMemo).
std::vector<Scenario> grid() {
  Scenario base;
  base.cluster = "dgx-h100";
  base.nodes = 2;
  base.model = "gpt-18b";
  base.tier = NetworkTier::Analytic;
  return sweep::expand(base, {{"--tokens-per-gpu", {"1024", "4096", "2048"}},
                              {"--grad-accum", {"1", "2", "4"}},
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
  REQUIRE(s.size() == 90u);  // 3 x 3 x 2 x (ZeRO-3 once; ZeRO++ and zero3+qgz at 2 chunk counts)
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

TEST_CASE("the plain file checks give what the watched ones give") {
  ReferenceModes plain_files;
  plain_files.file_watch = false;
  SimContext watched, stat_checked(plain_files);
  for (const Scenario& sc : grid()) CHECK(simulate(sc, watched) == simulate(sc, stat_checked));
}

TEST_CASE("an input file changed between two calls with one context is read again, at once") {
  const auto dir = temp_dir("sim_context_files");
  const std::string cluster = (dir / "c.json").string(), model = (dir / "m.json").string();
  const std::string gpt = slurp(std::string(ZEROSIM_SOURCE_DIR) + "/workloads/gpt-18b.json");
  for (const bool watch : {true, false}) {
    CAPTURE(watch);
    ReferenceModes modes;
    modes.file_watch = watch;
    SimContext context(modes);
    spit(cluster, R"({"builder": {"node_type": "dgx-h100", "nodes": 2}})");
    spit(model, gpt);
    Scenario sc;
    sc.cluster = cluster;
    sc.model = model;
    sc.tier = NetworkTier::Analytic;
    const StepResult two = simulate(sc, context);
    CHECK(two.scenario.nodes == 2);
    // Rewritten in place, no pause: the next call sees the new bytes (no time window).
    spit(cluster, R"({"builder": {"node_type": "dgx-h100", "nodes": 4}})");
    CHECK(simulate(sc, context).scenario.nodes == 4);
    json m = json::parse(gpt);
    m["layers"] = m["layers"].get<int>() / 2;
    spit(model, m.dump());
    const StepResult halved = simulate(sc, context);
    CHECK(halved.scenario.model.layers == m["layers"].get<int>());
    CHECK(halved.scenario.params < two.scenario.params);
    // Back to the first bytes: the first result, bit for bit.
    spit(cluster, R"({"builder": {"node_type": "dgx-h100", "nodes": 2}})");
    spit(model, gpt);
    CHECK(to_json(simulate(sc, context)).dump() == to_json(two).dump());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("two contexts share nothing") {
  SimContext a, b;
  const std::string preset = std::string(ZEROSIM_SOURCE_DIR) + "/topologies/dgx-h100.json";
  CHECK(a.files().bytes(preset) == a.files().bytes(preset));
  CHECK(a.files().bytes(preset) != b.files().bytes(preset));
  CHECK(*a.files().bytes(preset) == *b.files().bytes(preset));
  const ClusterOverrides two{2, 0, 0, "", 0};
  const auto ta = a.clusters().get("dgx-h100", two, a.files());
  CHECK(a.clusters().get("dgx-h100", two, a.files()) == ta);
  CHECK(b.clusters().get("dgx-h100", two, b.files()) != ta);
  const ModelShape m = load_model("gpt-18b");
  CHECK(a.modules().modules(m, 2048, m.seq) != b.modules().modules(m, 2048, m.seq));
  const CostProfile prof = select_cost_profile("", *ta);
  CHECK(a.plans().get(*ta, prof) == a.plans().get(*ta, prof));
  CHECK(a.plans().get(*ta, prof) != b.plans().get(*ta, prof));
}
