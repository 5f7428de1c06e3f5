// Sweep expansion: cartesian product in a fixed order, decoded lazily from the index (the same
// sequence as the full expansion), axes a strategy ignores run once, list parsing and
// contradictory/empty inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::sweep;

TEST_CASE("split_list trims items and rejects empty lists and empty items") {
  CHECK(split_list("100, 200,400", "--nic-gbps") == std::vector<std::string>{"100", "200", "400"});
  CHECK(split_list("zeropp", "--strategy") == std::vector<std::string>{"zeropp"});
  CHECK_THROWS_AS(split_list("", "--nic-gbps"), InputError);
  CHECK_THROWS_AS(split_list("100,,200", "--nic-gbps"), InputError);
  CHECK_THROWS_AS(split_list("100,", "--nic-gbps"), InputError);
  CHECK(caught_input_error([] { split_list(" ", "--nodes"); }).path() == "--nodes");
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
  const std::map<std::string, std::string> valid = {{"--cluster", "dgx2-v100"},
                                                    {"--nodes", "2"},
                                                    {"--fabric", "rail"},
                                                    {"--oversubscription", "2"},
                                                    {"--model", "gpt-18b"},
                                                    {"--seq-len", "512"},
                                                    {"--micro-batch", "2"},
                                                    {"--tokens-per-gpu", "1024"},
                                                    {"--grad-accum", "2"},
                                                    {"--nics-per-node", "4"},
                                                    {"--nic-gbps", "100"},
                                                    {"--strategy", "zero3+qgz"},
                                                    {"--deepspeed", "ds.json"},
                                                    {"--hpz-size", "8"},
                                                    {"--hsdp-size", "8"},
                                                    {"--qwz-bits", "8"},
                                                    {"--qgz-bits", "4"},
                                                    {"--qgz-chunks", "2"},
                                                    {"--profile", "p.json"},
                                                    {"--tier", "analytic"},
                                                    {"--activation-checkpointing", "false"},
                                                    {"--attention", "flash"},
                                                    {"--fsdp-backward-prefetch", "post"},
                                                    {"--fsdp-forward-prefetch", "true"},
                                                    {"--fsdp-limit-all-gathers", "false"},
                                                    {"--fsdp-param-dtype", "fp32"},
                                                    {"--fsdp-reduce-dtype", "fp32"},
                                                    {"--fsdp-reshard-after-forward", "false"},
                                                    {"--fsdp-config", "fsdp.yaml"},
                                                    {"--deepspeed-version", "0.13.2"},
                                                    {"--sm-share", "false"}};
  for (const auto& flag : sweep_flags()) {
    CAPTURE(flag);
    REQUIRE(valid.count(flag) == 1u);
    CHECK(expand(Scenario{}, {{flag, {valid.at(flag)}}}).size() == 1u);
  }
}

TEST_CASE("bad values, repeated and contradictory flags are InputErrors naming the flag") {
  auto fails_on = [](const std::vector<Axis>& axes, const std::string& flag) {
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
  CHECK(fails_on({{"--deepspeed", {"ds.json"}}, {"--fsdp-config", {"f.yaml"}}}, "--fsdp-config"));
  CHECK(fails_on({{"--fsdp-config", {"f.yaml"}}, {"--strategy", {"zero3"}}}, "--strategy"));
  CHECK(fails_on({{"--fsdp-config", {"f.yaml"}}, {"--fsdp-param-dtype", {"fp32"}}},
                 "--fsdp-param-dtype"));
  CHECK(fails_on({{"--fsdp-reshard-after-forward", {"1"}}}, "--fsdp-reshard-after-forward"));
}

TEST_CASE("a sweep runs FSDP strategies next to ZeRO ones; each ignores the other's knobs") {
  // 4 strategies x 2 FSDP1 prefetch settings x 2 FSDP2 reshard settings: every strategy runs each
  // knob it reads, once for each knob it does not.
  const ScenarioSpace space(Scenario{}, {{"--strategy", {"fsdp", "fsdp2", "zero3", "zeropp"}},
                                         {"--fsdp-backward-prefetch", {"pre", "post"}},
                                         {"--fsdp-reshard-after-forward", {"true", "false"}}});
  std::map<std::string, int> runs;
  for (std::size_t i = 0; i < space.size(); ++i)
    if (space.runs(i)) ++runs[space.at(i).strategy];
  CHECK(runs == std::map<std::string, int>{{"fsdp", 2}, {"fsdp2", 2}, {"zero3", 1}, {"zeropp", 1}});
}

TEST_CASE("scenario_to_json distinguishes scenarios that differ in any swept field") {
  auto s = expand(Scenario{}, {{"--nic-gbps", {"100", "200"}}, {"--qgz-bits", {"4", "8"}}});
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j)
      CHECK(scenario_to_json(s[i]) != scenario_to_json(s[j]));
}

namespace {

// The expansion as a list: a mixed-radix counter over the axes in sweep_flags() order, the last
// axis fastest, each scenario built by applying every axis's current value to the base.
std::vector<Scenario> reference_expansion(const Scenario& base, std::vector<Axis> axes) {
  const auto& order = sweep_flags();
  std::sort(axes.begin(), axes.end(), [&](const Axis& a, const Axis& b) {
    return std::find(order.begin(), order.end(), a.flag) <
           std::find(order.begin(), order.end(), b.flag);
  });
  std::size_t total = 1;
  for (const Axis& a : axes) total *= a.values.size();
  std::vector<Scenario> out;
  std::vector<std::size_t> digit(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    Scenario s = base;
    for (std::size_t k = 0; k < axes.size(); ++k)
      apply_flag(s, axes[k].flag, axes[k].values[digit[k]]);
    out.push_back(std::move(s));
    for (std::size_t k = axes.size(); k-- > 0;) {
      if (++digit[k] < axes[k].values.size()) break;
      digit[k] = 0;
    }
  }
  return out;
}

const std::vector<std::vector<Axis>>& specs() {
  static const std::vector<std::vector<Axis>> all = {
      {},
      {{"--nodes", {"1", "24", "3"}}},
      {{"--strategy", {"zero3", "zeropp"}},
       {"--nic-gbps", {"100", "200", "400"}},
       {"--tokens-per-gpu", {"1024", "2048"}}},
      {{"--tier", {"analytic", "flow"}},
       {"--nodes", {"1", "2", "3", "4", "5"}},
       {"--model", {"gpt-18b"}},
       {"--nics-per-node", {"1", "2", "4", "8"}},
       {"--seq-len", {"512", "1024", "2048"}},
       {"--grad-accum", {"1", "7"}}},
      {{"--qgz-chunks", {"1", "2", "3", "4", "5", "6", "7"}},
       {"--cluster", {"dgx2-v100", "dgx-h100"}}},
  };
  return all;
}

}  // namespace

TEST_CASE("the lazy scenario space yields exactly the full expansion, index by index") {
  Scenario base;
  base.model = "gpt-49b";
  for (const auto& axes : specs()) {
    const auto expected = reference_expansion(base, axes);
    const ScenarioSpace space(base, axes);
    REQUIRE(space.size() == expected.size());
    for (std::size_t i = 0; i < space.size(); ++i)
      CHECK(scenario_to_json(space.at(i)) == scenario_to_json(expected[i]));
    const auto listed = expand(base, axes);
    REQUIRE(listed.size() == expected.size());
    for (std::size_t i = 0; i < listed.size(); ++i)
      CHECK(scenario_to_json(listed[i]) == scenario_to_json(expected[i]));
    CHECK_THROWS_AS(space.at(space.size()), std::out_of_range);
  }
}

TEST_CASE("scenario indices and their per-axis digits round-trip") {
  for (const auto& axes : specs()) {
    const ScenarioSpace space(Scenario{}, axes);
    std::vector<std::size_t> previous;
    for (std::size_t i = 0; i < space.size(); ++i) {
      const auto d = space.digits(i);
      REQUIRE(d.size() == space.axes().size());
      for (std::size_t k = 0; k < d.size(); ++k) CHECK(d[k] < space.axes()[k].values.size());
      CHECK(space.index_of(d) == i);
      if (i > 0) CHECK(previous < d);  // lexicographic: the last axis varies fastest
      previous = d;
    }
  }
  const ScenarioSpace space(Scenario{}, specs()[2]);
  CHECK_THROWS_AS(space.index_of({0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(space.index_of({0, 3, 0}), std::out_of_range);
  CHECK_THROWS_AS(space.digits(space.size()), std::out_of_range);
}

TEST_CASE("a sweep at the size limit is decoded without being expanded") {
  // 10 x 10 x 10 x 10 x 10 = 100000 scenarios, the limit: the space holds its axes only.
  std::vector<Axis> axes;
  for (const char* flag :
       {"--nodes", "--nic-gbps", "--tokens-per-gpu", "--grad-accum", "--seq-len"}) {
    Axis a{flag, {}};
    for (int v = 1; v <= 10; ++v) a.values.push_back(std::to_string(v * 512));
    axes.push_back(a);
  }
  const ScenarioSpace space(Scenario{}, axes);
  REQUIRE(space.size() == kMaxSweepScenarios);
  const Scenario last = space.at(space.size() - 1);
  CHECK(last.nodes == 5120);
  CHECK(last.seq_len == 5120);
  // Scenario 1 differs from scenario 0 in the fastest axis only.
  Scenario second = space.at(0);
  apply_flag(second, space.axes().back().flag, space.axes().back().values[1]);
  CHECK(scenario_to_json(space.at(1)) == scenario_to_json(second));
  axes.push_back({"--strategy", {"zero3", "zeropp"}});
  CHECK_THROWS_AS(ScenarioSpace(Scenario{}, axes), InputError);
}

TEST_CASE("an axis a strategy ignores runs once for it: exactly the distinct scenarios run") {
  // Every strategy-specific axis against strategies that read some of them and not others.
  const std::vector<Axis> axes = {
      {"--nodes", {"1", "2"}},         {"--strategy", {"zero3", "zeropp", "hsdp", "zero3+qgz"}},
      {"--hpz-size", {"2", "4", "8"}}, {"--hsdp-size", {"4", "8"}},
      {"--qwz-bits", {"4", "8"}},      {"--qgz-chunks", {"1", "2"}}};
  const ScenarioSpace space(Scenario{}, axes);
  REQUIRE(space.size() == 2u * 4u * 3u * 2u * 2u * 2u);
  // An index runs iff its scenario differs from every lower-indexed one; the ones skipped repeat a
  // running one.
  std::vector<json> seen;
  std::map<std::string, std::size_t> skipped;  // by strategy
  for (std::size_t i = 0; i < space.size(); ++i) {
    const json s = scenario_to_json(space.at(i));
    const bool repeat = std::find(seen.begin(), seen.end(), s) != seen.end();
    CHECK_MESSAGE(space.runs(i) == !repeat, "index " << i << ": " << s.dump());
    if (repeat)
      ++skipped[space.at(i).strategy];
    else
      seen.push_back(s);
  }
  // zero3 reads none of the four axes (24 combinations, 1 runs), ZeRO++ reads hpZ, qwZ and qgZ
  // (hsdp-size's 2 values collapse), HSDP its group size only, zero3+qgz the chunks only.
  CHECK(seen.size() == 2u * (1 + 12 + 2 + 2));
  CHECK(space.running_indices().size() == seen.size());
  CHECK(expand(Scenario{}, axes).size() == seen.size());
  const std::vector<IgnoredAxes> ignored = space.ignored();
  REQUIRE(ignored.size() == 4u);
  CHECK(ignored[0].strategy == "zero3");
  CHECK(ignored[0].flags ==
        std::vector<std::string>{"--hpz-size", "--hsdp-size", "--qwz-bits", "--qgz-chunks"});
  CHECK(ignored[1].strategy == "zeropp");
  CHECK(ignored[1].flags == std::vector<std::string>{"--hsdp-size"});
  CHECK(ignored[2].flags == std::vector<std::string>{"--hpz-size", "--qwz-bits", "--qgz-chunks"});
  CHECK(ignored[3].flags == std::vector<std::string>{"--hpz-size", "--hsdp-size", "--qwz-bits"});
  for (const IgnoredAxes& g : ignored) CHECK(g.not_run == skipped[g.strategy]);
  // The scenario that runs keeps the base's value on an ignored axis: ZeRO-3 with --hpz-size is
  // not the error `simulate --strategy zero3 --hpz-size 2` is.
  const Scenario z3 = space.at(0);
  CHECK(z3.strategy == "zero3");
  CHECK(z3.hpz_partition == Scenario{}.hpz_partition);
  CHECK(z3.quant_bits_weights == Scenario{}.quant_bits_weights);
  const Scenario pp = space.at(space.index_of({0, 1, 2, 1, 0, 1}));
  CHECK(pp.hpz_partition == 8);
  CHECK(pp.hsdp_size == Scenario{}.hsdp_size);
  CHECK(pp.quant_bits_weights == 4);
  CHECK(pp.qgz_chunks == 2);
}

TEST_CASE("a sweep whose strategies read every axis runs all of it") {
  const ScenarioSpace space(Scenario{}, {{"--strategy", {"zeropp", "zero3+qwz+hpz+qgz"}},
                                         {"--qwz-bits", {"4", "8"}},
                                         {"--hpz-size", {"4", "8"}}});
  CHECK(space.running_indices().size() == space.size());
  CHECK(space.ignored().empty());
  // Without a strategy axis, the base's strategy decides.
  Scenario base;
  base.strategy = "zero3";
  const ScenarioSpace fixed(base, {{"--qwz-bits", {"4", "8"}}, {"--nodes", {"1", "2"}}});
  CHECK(fixed.running_indices() == std::vector<std::size_t>{0, 2});  // --nodes is outermost
  REQUIRE(fixed.ignored().size() == 1u);
  CHECK(fixed.ignored()[0].not_run == 2u);
}
