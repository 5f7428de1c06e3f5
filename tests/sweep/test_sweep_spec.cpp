// Sweep expansion: cartesian product in a fixed order, list parsing and contradictory/empty inputs.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "sim/sweep/sweep_spec.hpp"

using namespace zerosim;
using namespace zerosim::sweep;

TEST_CASE("split_list trims items and rejects empty lists and empty items") {
  CHECK(split_list("100, 200,400", "--nic-gbps") == std::vector<std::string>{"100", "200", "400"});
  CHECK(split_list("zeropp", "--strategy") == std::vector<std::string>{"zeropp"});
  CHECK_THROWS_AS(split_list("", "--nic-gbps"), InputError);
  CHECK_THROWS_AS(split_list("100,,200", "--nic-gbps"), InputError);
  CHECK_THROWS_AS(split_list("100,", "--nic-gbps"), InputError);
  try {
    split_list(" ", "--nodes");
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(e.path() == "--nodes");
  }
}

TEST_CASE("expand is the cartesian product, axes in sweep_flags() order, last axis fastest") {
  // Given out of order on purpose: the order of the flags on the command line must not matter.
  std::vector<Axis> axes = {{"--strategy", {"zero3", "zeropp"}},
                            {"--nic-gbps", {"100", "200", "400"}},
                            {"--tokens-per-gpu", {"1024", "2048"}}};
  auto s = expand(Scenario{}, axes);
  REQUIRE(s.size() == 2u * 3u * 2u);
  // tokens outermost, then nic-gbps, then strategy fastest.
  for (std::size_t i = 0; i < s.size(); ++i) {
    CHECK(s[i].tokens_per_gpu == (i / 6 == 0 ? 1024 : 2048));
    CHECK(s[i].nic_gbps == std::vector<double>{100, 200, 400}[(i / 2) % 3]);
    CHECK(s[i].strategy == (i % 2 == 0 ? "zero3" : "zeropp"));
  }
  // Fields not swept keep the base scenario's values.
  Scenario base;
  base.model = "gpt-49b";
  auto t = expand(base, {{"--nodes", {"1", "24"}}});
  REQUIRE(t.size() == 2u);
  CHECK(t[0].model == "gpt-49b");
  CHECK(t[1].nodes == 24);
  CHECK(expand(base, {}).size() == 1u);
}

TEST_CASE("every sweep flag is accepted with a valid value") {
  const std::map<std::string, std::string> valid = {
      {"--cluster", "dgx2-v100"},   {"--nodes", "2"},
      {"--fabric", "rail"},         {"--oversubscription", "2"},
      {"--model", "gpt-18b"},       {"--seq-len", "512"},
      {"--tokens-per-gpu", "1024"}, {"--grad-accum", "2"},
      {"--nics-per-node", "4"},     {"--nic-gbps", "100"},
      {"--strategy", "zero3+qgz"},  {"--deepspeed", "ds.json"},
      {"--hpz-size", "8"},          {"--hsdp-size", "8"},
      {"--qwz-bits", "8"},          {"--qgz-bits", "4"},
      {"--qgz-chunks", "2"},        {"--profile", "p.json"},
      {"--tier", "analytic"},       {"--activation-checkpointing", "false"},
      {"--attention", "flash"}};
  for (const auto& flag : sweep_flags()) {
    CAPTURE(flag);
    REQUIRE(valid.count(flag) == 1u);
    CHECK(expand(Scenario{}, {{flag, {valid.at(flag)}}}).size() == 1u);
  }
}

TEST_CASE("bad values, repeated and contradictory flags are InputErrors naming the flag") {
  auto fails_on = [](std::vector<Axis> axes, const std::string& flag) {
    try {
      expand(Scenario{}, axes);
    } catch (const InputError& e) {
      CHECK(e.path() == flag);
      return true;
    }
    return false;
  };
  CHECK(fails_on({{"--nodes", {"0"}}}, "--nodes"));
  CHECK(fails_on({{"--nodes", {"two"}}}, "--nodes"));
  CHECK(fails_on({{"--nic-gbps", {"-100"}}}, "--nic-gbps"));
  CHECK(fails_on({{"--tier", {"exact"}}}, "--tier"));
  CHECK(fails_on({{"--nodes", {}}}, "--nodes"));
  CHECK(fails_on({{"--nodes", {"1"}}, {"--nodes", {"2"}}}, "--nodes"));
  CHECK(fails_on({{"--trace", {"x"}}}, "--trace"));
  CHECK(fails_on({{"--deepspeed", {"ds.json"}}, {"--strategy", {"zero3"}}}, "--strategy"));
  CHECK(fails_on({{"--deepspeed", {"ds.json"}}, {"--grad-accum", {"2"}}}, "--grad-accum"));
}

TEST_CASE("scenario_to_json distinguishes scenarios that differ in any swept field") {
  auto s = expand(Scenario{}, {{"--nic-gbps", {"100", "200"}}, {"--qgz-bits", {"4", "8"}}});
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j)
      CHECK(scenario_to_json(s[i]) != scenario_to_json(s[j]));
}
