// Results files read strictly (read_step_results through step_result_from_json): another
// schema_version, an unknown or a missing key is refused naming the file, the JSON path and the
// rule; what a golden result renders is what the golden report holds.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "../support/files.hpp"
#include "../support/input_error.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/tables.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/sweep_spec.hpp"

using namespace zerosim;
using namespace zerosim::report;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(ZEROSIM_SOURCE_DIR) / "tests/golden/expected";

json golden(const char* name) { return parse_json_text(slurp(kGolden / name), name); }

const std::string kReads =
    "reads result schema version " + std::to_string(zerosim::kResultSchemaVersion);

}  // namespace

TEST_CASE("a result of another schema version is refused, in every kind of document") {
  const json one = golden("simulate-dgx2-1nic-gpt18b-zero3.json");
  for (int version : {0, zerosim::kResultSchemaVersion - 1, zerosim::kResultSchemaVersion + 1}) {
    CAPTURE(version);
    json r = one;
    r["schema_version"] = version;
    expect_input_error([&] { read_results(r, "r.json"); }, "r.json", "/schema_version",
                       kReads.c_str());
    expect_input_error(
        [&] {
          read_results(json::array({one, r}), "a.json");
        },
        "a.json", "/1/schema_version", kReads.c_str());
    json sweep = golden("sweep-dgx2-nics-strategies.json");
    sweep["results"][2]["schema_version"] = version;
    expect_input_error([&] { read_results(sweep, "s.json"); }, "s.json",
                       "/results/2/schema_version", kReads.c_str());
    const json plan = {{"kind", "plan"}, {"candidates", json::array({{{"result", r}}})}};
    expect_input_error([&] { read_results(plan, "p.json"); }, "p.json",
                       "/candidates/0/result/schema_version", kReads.c_str());
  }
}

TEST_CASE("a result with a wrapping or no schema_version, an unknown key or no metric is refused") {
  const json one = golden("simulate-dgx2-1nic-gpt18b-zero3.json");
  json r = one;
  // The current version once narrowed to 32 bits.
  r["schema_version"] = (std::int64_t{1} << 32) + zerosim::kResultSchemaVersion;
  expect_input_error([&] { read_results(r, "r.json"); }, "r.json", "/schema_version",
                     kReads.c_str());
  r = one;
  r.erase("schema_version");
  expect_input_error([&] { read_results(r, "r.json"); }, "r.json", "",
                     "missing required key 'schema_version'");
  r = one;
  r["scenario"]["colour"] = "blue";
  expect_input_error([&] { read_results(json::array({r}), "r.json"); }, "r.json",
                     "/0/scenario/colour", "unknown key 'colour'");
  r = one;
  r["breakdown"].erase("idle_s");
  expect_input_error([&] { read_results(json::array({r}), "r.json"); }, "r.json", "/0/breakdown",
                     "missing required key 'idle_s'");
}

TEST_CASE("the report of the golden sweep is the golden report") {
  const std::vector<ResultView> views =
      read_results(golden("sweep-dgx2-nics-strategies.json"), "sweep-dgx2-nics-strategies.json");
  REQUIRE(views.size() == 4u);
  CHECK(render_csv(views) == slurp(kGolden / "report-sweep.csv"));
  CHECK(render_markdown(views, "sweep-dgx2-nics-strategies.json") ==
        slurp(kGolden / "report-sweep.md"));
}

TEST_CASE("a golden result's view is its StepResult's") {
  const json one = golden("simulate-dgx-h100-llama3-8b-zeropp.json");
  const StepResult r = step_result_from_json(JsonReader(one, "r.json"));
  const std::vector<ResultView> views = read_results(one, "r.json");
  REQUIRE(views.size() == 1u);
  const ResultView& v = views[0];
  CHECK(v.model == r.scenario.model.name);
  CHECK(v.strategy == "zeropp");
  CHECK(v.gpus == r.scenario.world_size);
  CHECK(v.tokens_per_gpu == r.scenario.tokens_per_gpu);
  CHECK(v.step_time_s == r.step_time_s);
  CHECK(v.peak_bytes_per_gpu == r.memory.peak_bytes);
  CHECK(v.identity == one.at("scenario").dump());
  CHECK(render_csv(views) == render_csv({view_of(r)}));
}

TEST_CASE("runs of one strategy with other bits, hpZ groups or checkpointing are told apart") {
  StepResult r =
      read_step_results(golden("simulate-dgx-h100-llama3-8b-zeropp.json"), "g.json").at(0);
  REQUIRE(r.scenario.strategy.qwz);
  REQUIRE(r.scenario.strategy.hpz);
  const ResultView plain = view_of(r);
  CHECK(plain.variant.empty());
  CHECK(plain.strategy_name() == "ZeRO++");
  r.scenario.strategy.weight_bits = 4;
  r.scenario.strategy.hpz_size = r.scenario.gpus_per_node / 2;
  r.scenario.strategy.qgz_chunks = 4;
  r.scenario.activation_checkpointing = false;
  const ResultView v = view_of(r);
  CHECK(v.variant == fmt::format("qwZ INT4, hpZ k={}, qgZ 4 chunks", r.scenario.gpus_per_node / 2));
  CHECK(v.strategy_name() == "ZeRO++ (" + v.variant + ")");
  CHECK(v.strategy_key() != plain.strategy_key());
  CHECK(group_key(v) != group_key(plain));  // checkpointing is part of the experiment
  CHECK(v.label().find("no activation checkpointing") != std::string::npos);
  r.scenario.attention = r.scenario.attention == "flash" ? "eager" : "flash";
  const ResultView other_attention = view_of(r);
  CHECK(group_key(other_attention) != group_key(v));  // so is the attention
  CHECK(other_attention.label() != v.label());
  CHECK(render_csv({other_attention}) != render_csv({v}));
  const std::vector<const ResultView*> both = {&v, &plain, &v};
  CHECK(distinct_strategies(both).size() == 2u);
}

TEST_CASE("a result's CSV row made from it equals the row of its JSON read back") {
  // `zerosim sweep --csv` makes each row from the result as it is simulated; the row must be
  // the one the result's JSON text (the sweep's document) reads back to.
  std::vector<Scenario> scenarios =
      sweep::expand(Scenario{}, {{"--cluster", {"dgx2-v100"}},
                                 {"--nodes", {"2"}},
                                 {"--model", {"gpt-18b"}},
                                 {"--strategy", {"zero3", "zeropp", "zero3+qgz"}},
                                 {"--tokens-per-gpu", {"1024"}},
                                 {"--grad-accum", {"1", "3"}},
                                 {"--tier", {"analytic"}}});
  Scenario offload = scenarios.front();
  offload.deepspeed = std::string(ZEROSIM_SOURCE_DIR) +
                      "/workloads/deepspeed/published/accelerate-zero_stage3_offload_config.json";
  scenarios.push_back(offload);
  for (const Scenario& s : scenarios) {
    CAPTURE(s.strategy);
    CAPTURE(s.deepspeed);
    const StepResult r = simulate(s);
    const json text = parse_json_text(to_json(r).dump(), "r.json");
    const StepResult back = step_result_from_json(JsonReader(text, "r.json"));
    CHECK(csv_row(view_of(r)) == csv_row(view_of(back)));
  }
}
