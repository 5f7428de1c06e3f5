// The attention implementation (--attention flash | eager | auto): auto's choice per GPU and model
// family, FlashAttention refused on Volta, its memory (no s x s scores: Mistral-7B at 32k context
// fits on 32 H100s with it and not without). Its compute: tests/step/test_compute_model.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "sim/step/lower.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/step/simulate.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/run_cli.hpp"
#include "tests/support/simulate_unrefused.hpp"

using namespace zerosim;
using zerosim::testing::simulate_unrefused;

namespace {

const std::string kMistral = ZEROSIM_SOURCE_DIR "/workloads/hf/mistral-7b-v0.1.json";

Scenario scenario(const std::string& cluster, int nodes, const std::string& model,
                  const std::string& attention) {
  Scenario s;
  s.cluster = cluster;
  s.nodes = nodes;
  s.model = model;
  apply_scenario_param(s, *find_scenario_param("--attention"), attention);  // its rule, as a flag
  s.tier = NetworkTier::Analytic;
  return s;
}

// Mistral-7B at its 32k context, micro-batch 1, checkpointing on, 4 DGX-H100 nodes (32 GPUs).
Scenario mistral_32k(const std::string& attention) {
  Scenario s = scenario("dgx-h100", 4, kMistral, attention);
  s.seq_len = 32768;
  s.tokens_per_gpu = 32768;
  s.activation_checkpointing = true;
  return s;
}

}  // namespace

TEST_CASE("auto: FlashAttention on Ampere and Hopper for the families that use it, else eager") {
  struct Case {
    std::string cluster, model, expected;
  };
  for (const Case& c : std::vector<Case>{{"dgx2-v100", "llama-2-7b", "eager"},
                                         {"dgx2-v100", "gpt-18b", "eager"},
                                         {"dgx-a100", "llama-2-7b", "flash"},
                                         {"dgx-h100", "llama-3-8b", "flash"},
                                         {"dgx-h100", kMistral, "flash"},
                                         {"dgx-h100", "gpt-18b", "eager"}}) {
    CAPTURE(c.cluster);
    CAPTURE(c.model);
    CHECK(simulate_unrefused(scenario(c.cluster, 2, c.model, "auto")).scenario.attention ==
          c.expected);
  }
  // Asked for, either runs where FlashAttention does.
  CHECK(simulate_unrefused(scenario("dgx-h100", 2, "gpt-18b", "flash")).scenario.attention ==
        "flash");
  CHECK(simulate_unrefused(scenario("dgx-h100", 2, "llama-3-8b", "eager")).scenario.attention ==
        "eager");
}

TEST_CASE("FlashAttention on a V100 and unknown implementations are bad input naming --attention") {
  expect_input_error([] { simulate_unrefused(scenario("dgx2-v100", 2, "llama-2-7b", "flash")); },
                     "<command line>", "--attention", "needs an Ampere or later GPU");
  expect_input_error([] { simulate_unrefused(scenario("dgx-h100", 2, "llama-2-7b", "sdpa")); },
                     "<command line>", "--attention", "'sdpa' is not auto, flash or eager");
  for (const std::string command : {"simulate", "sweep", "plan"}) {
    CAPTURE(command);
    const CliRun r =
        run(command + " --cluster dgx-h100 --nodes 2 --model llama-2-7b --attention sdpa");
    CHECK(r.rc == 2);
    CHECK_MESSAGE(r.out.find("--attention") != std::string::npos, r.out);
    CHECK_MESSAGE(r.out.find("auto") != std::string::npos, r.out);
    CHECK_MESSAGE(r.out.find("flash") != std::string::npos, r.out);
    CHECK_MESSAGE(r.out.find("eager") != std::string::npos, r.out);
  }
  const CliRun v100 =
      run("simulate --cluster dgx2-v100 --nodes 2 --model llama-2-7b --attention flash");
  CHECK(v100.rc == 2);
  CHECK_MESSAGE(v100.out.find("--attention: FlashAttention needs an Ampere or later GPU") !=
                    std::string::npos,
                v100.out);
}

TEST_CASE("Mistral-7B at 32k context on 32 H100s fits with FlashAttention, not with eager") {
  const StepResult flash = simulate_unrefused(mistral_32k("auto"));
  const StepResult eager = simulate_unrefused(mistral_32k("eager"));
  CHECK(flash.scenario.attention == "flash");
  CHECK(flash.scenario.micro_batch_sequences == 1);
  CHECK(flash.scenario.world_size == 32);
  CHECK(flash.memory.fits);
  CHECK_FALSE(eager.memory.fits);
  // With checkpointing one layer's full activations are live: the difference is its scores,
  // 2 bytes x 32 heads x 32k x 32k = 64 GiB, less FlashAttention's logsumexp (4 MiB).
  const double t = 32768, heads = 32;
  CHECK(eager.memory.component("activations") - flash.memory.component("activations") ==
        2 * heads * t * t - 4 * heads * t);
  // The peaks sum components of fractional bytes (shards of psi / W): equal to their rounding.
  CHECK(std::abs(eager.memory.peak_bytes - flash.memory.peak_bytes -
                 (2 * heads * t * t - 4 * heads * t)) <= 1e-12 * eager.memory.peak_bytes);
  // The breakdown says why: eager's largest part, named in the warning, is the activations.
  const auto& parts = eager.memory.components;
  const auto largest = std::max_element(parts.begin(), parts.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
  CHECK(largest->first == "activations");
  REQUIRE_FALSE(eager.warnings.empty());
  CHECK(eager.warnings[0].find("largest parts: activations") != std::string::npos);
  // The CLI says it in the summary.
  const CliRun r = run("simulate --cluster dgx-h100 --nodes 4 --model " + kMistral +
                       " --seq-len 32768 --tokens-per-gpu 32768 --tier analytic");
  CHECK(r.rc == 0);
  CHECK_MESSAGE(r.out.find("flash attention, activation checkpointing on") != std::string::npos,
                r.out);
  CHECK_MESSAGE(r.out.find("(fits)") != std::string::npos, r.out);
}
