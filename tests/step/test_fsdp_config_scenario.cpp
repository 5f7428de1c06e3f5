// --fsdp-config applied to a scenario: the config's settings replace the flags' defaults, a flag
// given with another value is an error naming the config's key and the flag, --deepspeed beside it
// is refused, and a config runs exactly the step its equivalent flags run.
#include <doctest/doctest.h>

#include <string>

#include "sim/step/fsdp_config_scenario.hpp"
#include "sim/step/simulate.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

const std::string kFoundry =
    std::string(ZEROSIM_SOURCE_DIR) + "/workloads/fsdp/llm-foundry-mpt-7b.yaml";
const std::string kAccelerate =
    std::string(ZEROSIM_SOURCE_DIR) + "/workloads/fsdp/accelerate-fsdp.yaml";

Scenario small() {
  Scenario sc;
  sc.cluster = "dgx-a100";
  sc.nodes = 2;
  sc.model = "mpt-125m";
  sc.seq_len = 2048;
  sc.tokens_per_gpu = 2048;
  sc.tier = NetworkTier::Analytic;
  return sc;
}

}  // namespace

TEST_CASE("an FSDP config's settings replace the flags' defaults and are said in the warnings") {
  Scenario sc = small();
  sc.fsdp_config = kFoundry;
  sc.activation_checkpointing = true;
  const FsdpConfiguredScenario c = apply_fsdp_config(sc);
  CHECK(c.scenario.strategy == "fsdp");
  CHECK(c.scenario.fsdp_param_dtype == FsdpDtype::Bf16);
  CHECK(c.scenario.fsdp_reduce_dtype == FsdpDtype::Bf16);
  CHECK(c.scenario.activation_checkpointing);
  REQUIRE(!c.warnings.empty());
  CHECK(c.warnings[0].find("--strategy fsdp") != std::string::npos);
  CHECK(scenario_strategy(sc).name() == "fsdp");
  CHECK(scenario_strategy(sc).source == kFoundry);
  // Without a config: the scenario unchanged, nothing said.
  const FsdpConfiguredScenario none = apply_fsdp_config(small());
  CHECK(none.scenario.strategy == small().strategy);
  CHECK(none.warnings.empty());
}

TEST_CASE("a flag that contradicts the config is an error naming the config's key and the flag") {
  Scenario sc = small();
  sc.fsdp_config = kFoundry;
  sc.strategy = "fsdp-grad-op";
  expect_input_error([&] { apply_fsdp_config(sc); }, kFoundry, "/fsdp_config/sharding_strategy",
                     "the command line gives --strategy fsdp-grad-op");
  sc = small();
  sc.fsdp_config = kFoundry;
  sc.activation_checkpointing = false;
  expect_input_error([&] { apply_fsdp_config(sc); }, kFoundry,
                     "/fsdp_config/activation_checkpointing", "--activation-checkpointing false");
  sc = small();
  sc.fsdp_config = kAccelerate;
  sc.fsdp_backward_prefetch = BackwardPrefetch::Post;
  expect_input_error([&] { apply_fsdp_config(sc); }, kAccelerate,
                     "/fsdp_config/fsdp_backward_prefetch", "--fsdp-backward-prefetch post");
  // The same value as the config's: no contradiction.
  sc.fsdp_backward_prefetch = BackwardPrefetch::Pre;
  CHECK(apply_fsdp_config(sc).scenario.fsdp_backward_prefetch == BackwardPrefetch::Pre);
  // A knob the config leaves out keeps the flag's value.
  sc.fsdp_limit_all_gathers = false;
  CHECK_FALSE(apply_fsdp_config(sc).scenario.fsdp_limit_all_gathers);
  sc.deepspeed = "ds.json";
  expect_input_error([&] { apply_fsdp_config(sc); }, "<command line>", "--fsdp-config",
                     "contradicts --deepspeed");
}

TEST_CASE("a config runs exactly the step of its equivalent flags") {
  Scenario by_file = small();
  by_file.fsdp_config = kFoundry;
  Scenario by_flags = small();
  by_flags.strategy = "fsdp";
  by_flags.fsdp_param_dtype = FsdpDtype::Bf16;
  by_flags.fsdp_reduce_dtype = FsdpDtype::Bf16;
  by_flags.activation_checkpointing = true;
  const StepResult a = simulate(by_file), b = simulate(by_flags);
  CHECK(a.step_time_s == b.step_time_s);
  CHECK(a.memory.peak_bytes == b.memory.peak_bytes);
  CHECK(a.scenario.strategy.source == kFoundry);
  // Reducing in FP32 (mixed_precision FULL) is a different step: the file is read, not ignored.
  by_flags.fsdp_param_dtype = FsdpDtype::Fp32;
  by_flags.fsdp_reduce_dtype = FsdpDtype::Fp32;
  CHECK(simulate(by_flags).step_time_s != a.step_time_s);
}
