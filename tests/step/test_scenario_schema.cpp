// The scenario schema (sim/step/scenario_schema.hpp) declares every Scenario parameter once:
// every field is in the table, scenario_to_json has exactly its keys, and `simulate` and `sweep`
// accept every flag of it with the same range and refuse the same value with the same message.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstddef>
#include <set>
#include <string>

#include "sim/core/error.hpp"
#include "sim/step/scenario_schema.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/run_cli.hpp"

using namespace zerosim;

namespace {

// Counts an aggregate's fields: the most initializers of any type it takes.
struct AnyField {
  template <typename T>
  operator T() const;
};
template <typename T, typename... A>
constexpr std::size_t field_count() {
  if constexpr (requires { T{A{}..., AnyField{}}; })
    return field_count<T, A..., AnyField>();
  else
    return sizeof...(A);
}

// A valid value of p other than Scenario{}'s.
std::string other_valid_value(const ScenarioParam& p) {
  const json def = scenario_to_json(Scenario{}).at(p.key);
  if (!p.choices.empty()) {
    for (const auto& c : p.choices)
      if ((def.is_string() ? def.get<std::string>() : def.dump()) != c) return c;
  }
  if (std::holds_alternative<int Scenario::*>(p.member))
    return std::to_string(def.get<int>() == static_cast<int>(p.min) ? static_cast<int>(p.min) + 1
                                                                    : static_cast<int>(p.min));
  if (std::holds_alternative<double Scenario::*>(p.member))
    return fmt::format("{:g}", def.get<double>() == p.max ? p.min : p.max);
  if (p.flag == "--fsdp-reshard-after-forward") return "false";  // the default is true
  if (p.text_rule) return "0.10.0";  // --deepspeed-version (the default is 0.19)
  return "x.json";
}

// A value p's rule refuses, or "" for free text.
std::string invalid_value(const ScenarioParam& p) {
  if (!p.choices.empty()) return "bogus";
  if (std::holds_alternative<int Scenario::*>(p.member))
    return std::to_string(static_cast<long long>(p.max) + 1);
  if (std::holds_alternative<double Scenario::*>(p.member)) return fmt::format("{:g}", p.max * 10);
  if (p.text_rule) return "0.9";
  return "";
}

// The message after "<command line>: " (simulate reports CLI11's parse error, sweep an InputError).
std::string rule_part(const std::string& out) {
  const std::string tag = "<command line>: ";
  const auto at = out.find(tag);
  return at == std::string::npos ? out : out.substr(at + tag.size());
}

}  // namespace

TEST_CASE("every Scenario field is in the table once, and scenario_to_json has exactly its keys") {
  const auto& table = scenario_params();
  CHECK(field_count<Scenario>() == table.size());
  std::set<std::string> flags, keys;
  for (const auto& p : table) {
    CHECK(flags.insert(p.flag).second);
    CHECK(keys.insert(p.key).second);
    CHECK(find_scenario_param(p.flag) == &p);
  }
  const json j = scenario_to_json(Scenario{});
  std::set<std::string> json_keys;
  for (const auto& item : j.items()) json_keys.insert(item.key());
  CHECK(json_keys == keys);
}

TEST_CASE("each entry sets its own member: a valid value changes exactly its key") {
  const json base = scenario_to_json(Scenario{});
  for (const auto& p : scenario_params()) {
    const std::string v = other_valid_value(p);
    CAPTURE(p.flag);
    CAPTURE(v);
    CHECK(scenario_param_rule(p, v) == "");
    Scenario s;
    apply_scenario_param(s, p, v);
    const json j = scenario_to_json(s);
    for (const auto& item : base.items())
      CHECK((j.at(item.key()) != item.value()) == (item.key() == p.key));
  }
}

TEST_CASE("rules: integers, finite numbers in range, choices; InputError naming the flag") {
  const ScenarioParam& nodes = *find_scenario_param("--nodes");
  CHECK(scenario_param_rule(nodes, "0") == "must be at least 1, not '0'");
  CHECK(scenario_param_rule(nodes, "1048577") == "must be at most 1048576, not '1048577'");
  CHECK(scenario_param_rule(nodes, "99999999999999999999") ==
        "must be at most 1048576, not '99999999999999999999'");
  CHECK(scenario_param_rule(nodes, "-99999999999999999999") ==
        "must be at least 1, not '-99999999999999999999'");
  CHECK(scenario_param_rule(nodes, "two") == "'two' is not an integer");
  CHECK(scenario_param_rule(nodes, "2.5") == "'2.5' is not an integer");
  const ScenarioParam& gbps = *find_scenario_param("--nic-gbps");
  CHECK(scenario_param_rule(gbps, "nan") == "must be a finite number, not 'nan'");
  CHECK(scenario_param_rule(gbps, "fast") == "'fast' is not a number");
  CHECK(scenario_param_rule(gbps, "0") == "must be between 0.001 and 1e+06, not '0'");
  CHECK(scenario_param_rule(*find_scenario_param("--tier"), "exact") ==
        "'exact' is not flow or analytic");
  Scenario s;
  const auto e = caught_input_error(
      [&] { apply_scenario_param(s, *find_scenario_param("--fabric"), "torus"); });
  CHECK(e.path() == "--fabric");
  CHECK(e.rule() == "'torus' is not rail or fat-tree");
  CHECK(scenario_param_help(nodes, false) ==
        "number of server nodes (builder presets only); required with a preset of one node type "
        "(dgx-h100, dgx2-v100, ...) (default: the preset's)");
  CHECK(scenario_param_help(*find_scenario_param("--grad-accum"), false).ends_with("(default: 1)"));
  CHECK(
      scenario_param_help(*find_scenario_param("--model"), false).ends_with("(default: gpt-18b)"));
}

TEST_CASE("simulate and sweep list every flag of the table with the same range") {
  const CliRun sim = run("simulate --help");
  const CliRun swp = run("sweep --help");
  REQUIRE(sim.rc == 0);
  REQUIRE(swp.rc == 0);
  for (const auto& p : scenario_params()) {
    CAPTURE(p.flag);
    CHECK(sim.out.find(p.flag + " ") != std::string::npos);
    CHECK(swp.out.find(p.flag + " ") != std::string::npos);
    const std::string range = scenario_param_range(p);
    if (range.empty()) continue;
    CHECK(sim.out.find(range) != std::string::npos);
    CHECK(swp.out.find(range) != std::string::npos);
  }
}

TEST_CASE("simulate and sweep refuse the same value with the same message, exit 2") {
  for (const auto& p : scenario_params()) {
    const std::string bad = invalid_value(p);
    if (bad.empty()) continue;  // free text (files, presets, strategies): checked when simulated
    CAPTURE(p.flag);
    const std::string args = p.flag + " " + bad;
    const CliRun sim = run("simulate --cluster dgx-h100 --model gpt-18b " + args);
    const CliRun swp = run("sweep --cluster dgx-h100 --model gpt-18b " + args);
    CHECK(sim.rc == 2);
    CHECK(swp.rc == 2);
    const std::string expected = fmt::format("{}: {}\n", p.flag, scenario_param_rule(p, bad));
    CHECK(rule_part(sim.out) == expected);
    CHECK(rule_part(swp.out) == expected);
  }
}

TEST_CASE("simulate and sweep accept a valid value of every flag") {
  std::string args =
      "--cluster dgx-h100 --nodes 2 --fabric fat-tree --oversubscription 2 "
      "--model gpt-18b --seq-len 1024 --tokens-per-gpu 1024 --grad-accum 1 "
      "--nics-per-node 4 --nic-gbps 200 --strategy zeropp --hpz-size 8 "
      "--qwz-bits 4 --qgz-bits 4 --qgz-chunks 2 --profile dgx-h100 --tier analytic "
      "--activation-checkpointing false --attention flash --sm-share false "
      "--deepspeed-version 0.13.2";
  std::set<std::string> given;
  for (const auto& p : scenario_params())
    if (args.find(p.flag + " ") != std::string::npos) given.insert(p.flag);
  // All but --deepspeed and --fsdp-config (replace --strategy), --hsdp-size (HSDP has no hpZ), the
  // six FSDP knobs (FSDP has no ZeRO++) and --micro-batch (--tokens-per-gpu gives the micro-batch):
  // run below.
  CHECK(given.size() + 10 == scenario_params().size());
  const CliRun sim = run("simulate " + args + " --json");
  CHECK_MESSAGE(sim.rc == 0, sim.out);
  CHECK(sim.out.find("\"activation_checkpointing\": false") != std::string::npos);
  CHECK(sim.out.find("\"attention\": \"flash\"") != std::string::npos);
  CHECK(sim.out.find("\"sm_share\": false") != std::string::npos);
  const CliRun swp = run("sweep " + args + " --threads 1");
  CHECK_MESSAGE(swp.rc == 0, swp.out);
  const CliRun ds =
      run("simulate --cluster dgx2-v100 --nodes 2 --model gpt-18b --tier analytic "
          "--deepspeed " ZEROSIM_SOURCE_DIR "/workloads/deepspeed/zeropp-paper-zero3-qwz.json");
  CHECK_MESSAGE(ds.rc == 0, ds.out);
  const CliRun hsdp =
      run("simulate --cluster dgx-h100 --nodes 2 --model gpt-18b --tier analytic --strategy hsdp "
          "--hsdp-size 4");
  CHECK_MESSAGE(hsdp.rc == 0, hsdp.out);
  const CliRun fsdp =
      run("simulate --cluster dgx-h100 --nodes 2 --model llama-2-7b --tier analytic --strategy "
          "fsdp-hybrid --hsdp-size 8 --fsdp-backward-prefetch post --fsdp-forward-prefetch true "
          "--fsdp-limit-all-gathers false --fsdp-param-dtype fp32 --fsdp-reduce-dtype bf16");
  CHECK_MESSAGE(fsdp.rc == 0, fsdp.out);
  const CliRun fsdp2 =
      run("simulate --cluster dgx-h100 --nodes 2 --model llama-2-7b --tier analytic --strategy "
          "fsdp2 --fsdp-reshard-after-forward 8");
  CHECK_MESSAGE(fsdp2.rc == 0, fsdp2.out);
  const CliRun config =
      run("simulate --cluster dgx-h100 --nodes 2 --model llama-2-7b --tier analytic --fsdp-config "
          "" ZEROSIM_SOURCE_DIR "/workloads/fsdp/accelerate-fsdp.yaml");
  CHECK_MESSAGE(config.rc == 0, config.out);
}
