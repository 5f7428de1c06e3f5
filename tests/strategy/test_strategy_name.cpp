// The strategy vocabulary (sim/strategy/strategy_name.hpp): every strategy's name parses back to
// itself, display names and families, the sort order, and the refusals.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/strategy/strategy.hpp"
#include "sim/strategy/strategy_name.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

// Every strategy of the vocabulary: the named kinds and ZeRO-3 with each subset of ZeRO++.
std::vector<StrategyId> every_strategy() {
  std::vector<StrategyId> all;
  for (const StrategyKind k :
       {StrategyKind::Zero1, StrategyKind::Zero2, StrategyKind::Hsdp, StrategyKind::FsdpFullShard,
        StrategyKind::FsdpShardGradOp, StrategyKind::FsdpHybridShard, StrategyKind::Fsdp2})
    all.push_back(StrategyId{k});
  for (int mask = 0; mask < 8; ++mask)
    all.push_back(
        StrategyId{StrategyKind::Zero3, (mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0});
  return all;
}

}  // namespace

TEST_CASE("every name parses back to its strategy, through Strategy too") {
  for (const StrategyId& id : every_strategy()) {
    CAPTURE(id.name());
    CHECK(parse_strategy_id(id.name()) == id);
    CHECK(find_strategy_id(id.name()) == id);
    CHECK(parse_strategy(id.name()).id() == id);
    CHECK(strategy_of(id).name() == id.name());
  }
  CHECK(parse_strategy_id("zero++") == parse_strategy_id("zeropp"));
  CHECK(parse_strategy_id("zero3+qgz+qwz").name() == "zero3+qwz+qgz");  // any order
}

TEST_CASE("display names, families and the order of tables") {
  CHECK(parse_strategy_id("zeropp").display() == "ZeRO++");
  CHECK(parse_strategy_id("zero3+qwz+hpz").display() == "ZeRO-3 + qwZ + hpZ");
  CHECK(parse_strategy_id("fsdp").display() == "FSDP FULL_SHARD");
  CHECK(parse_strategy_id("fsdp-grad-op").display() == "FSDP SHARD_GRAD_OP");
  CHECK(parse_strategy_id("fsdp-hybrid").display() == "FSDP HYBRID_SHARD");
  CHECK(parse_strategy_id("fsdp2").display() == "FSDP2 fully_shard");
  CHECK(parse_strategy_id("fsdp2").family() == StrategyFamily::Fsdp);
  CHECK(parse_strategy_id("hsdp").family() == StrategyFamily::DeepSpeed);
  CHECK(parse_strategy_id("fsdp-hybrid").family() == StrategyFamily::Fsdp);
  CHECK(std::string(to_string(StrategyFamily::Fsdp)) == "fsdp");
  const std::vector<std::string> order = {"zero1", "zero2", "zero3",        "zero3+qwz",   "zeropp",
                                          "hsdp",  "fsdp",  "fsdp-grad-op", "fsdp-hybrid", "fsdp2"};
  for (std::size_t i = 1; i < order.size(); ++i)
    CHECK(parse_strategy_id(order[i - 1]).rank() < parse_strategy_id(order[i]).rank());
  // Ranks are distinct: one per strategy.
  const auto all = every_strategy();
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) CHECK(all[i].rank() != all[j].rank());
}

TEST_CASE("strategies of the FSDP family carry PyTorch's defaults") {
  const Strategy s = parse_strategy("fsdp");
  CHECK(s.family() == StrategyFamily::Fsdp);
  CHECK(s.fsdp.sharding == FsdpSharding::FullShard);
  CHECK(s.fsdp.backward_prefetch == BackwardPrefetch::Pre);
  CHECK_FALSE(s.fsdp.forward_prefetch);
  CHECK(s.fsdp.limit_all_gathers);
  CHECK_FALSE(s.hybrid());
  CHECK(parse_strategy("fsdp-hybrid").hybrid());
  CHECK(parse_strategy("hsdp").hybrid());
  CHECK(parse_strategy("zeropp").family() == StrategyFamily::DeepSpeed);
}

TEST_CASE("names outside the vocabulary are refused, naming the flag") {
  CHECK_FALSE(find_strategy_id("fsdp3"));
  CHECK_FALSE(find_strategy_id("zero3+turbo"));
  CHECK_FALSE(find_strategy_id(""));
  expect_input_error([] { parse_strategy_id("fsdp+qgz", "--strategy"); }, "<command line>",
                     "--strategy", "PyTorch FSDP has no quantized collectives");
  expect_input_error([] { parse_strategy_id("hsdp+qwz", "--strategy"); }, "<command line>",
                     "--strategy", "hsdp takes no components");
  expect_input_error([] { parse_strategy_id("zero4", "--x"); }, "<command line>", "--x",
                     "must start with zero3");
  expect_input_error([] { parse_strategy_id("zero3+qwz+qwz"); }, "<command line>", "--strategy",
                     "given twice");
}
