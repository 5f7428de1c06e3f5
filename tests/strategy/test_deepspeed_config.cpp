// DeepSpeed configs: every documented key read, accepted without effect (listed here, so a change
// to the list is a visible change) or refused with its reason; the documentation-shaped examples
// load; unknown keys are reported all at once with their closest known key; sub_group_size sizes
// the optimizer step's FP32 gradient copy.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/memory/memory.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

Strategy ds_text(const std::string& text) {
  return parse_deepspeed(parse_json_text(text, "ds.json"), "ds.json");
}

// A BF16 stage-3 config with `top` added at the top level and `zero` inside zero_optimization.
Strategy ds(const std::string& top, const std::string& zero) {
  return ds_text(R"({"bf16": {"enabled": true}, )" + top + (top.empty() ? "" : ", ") +
                 R"("zero_optimization": {"stage": 3)" + (zero.empty() ? "" : ", ") + zero + "}}");
}

std::vector<std::string> keys_of(const std::vector<DeepSpeedKey>& table) {
  std::vector<std::string> v;
  v.reserve(table.size());
  for (const DeepSpeedKey& k : table) v.emplace_back(k.key);
  return v;
}

const std::string kDocumented =
    std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/documented/";

}  // namespace

TEST_CASE("the keys accepted without effect on step time or memory") {
  CHECK(keys_of(deepspeed_top_keys_without_effect()) ==
        std::vector<std::string>{"optimizer",
                                 "scheduler",
                                 "gradient_clipping",
                                 "prescale_gradients",
                                 "gradient_predivide_factor",
                                 "sparse_gradients",
                                 "zero_allow_untested_optimizer",
                                 "zero_force_ds_cpu_optimizer",
                                 "steps_per_print",
                                 "wall_clock_breakdown",
                                 "dump_state",
                                 "memory_breakdown",
                                 "timers",
                                 "flops_profiler",
                                 "tensorboard",
                                 "wandb",
                                 "csv_monitor",
                                 "comet",
                                 "comms_logger",
                                 "activation_checkpointing",
                                 "aio",
                                 "checkpoint",
                                 "data_types",
                                 "elasticity",
                                 "autotuning",
                                 "dataloader_drop_last",
                                 "data_efficiency",
                                 "curriculum_learning",
                                 "compile",
                                 "seed"});
  CHECK(keys_of(deepspeed_zero_keys_without_effect()) ==
        std::vector<std::string>{"round_robin_gradients",
                                 "use_multi_rank_bucket_allreduce",
                                 "load_from_fp32_weights",
                                 "elastic_checkpoint",
                                 "ignore_unused_parameters",
                                 "legacy_stage1",
                                 "zero_quantized_nontrainable_weights",
                                 "zeropp_loco_param",
                                 "memory_efficient_linear",
                                 "pipeline_loading_checkpoint",
                                 "override_module_apply",
                                 "log_trace_cache_warnings",
                                 "enable_sanity_checks",
                                 "save_muon_momentum_buffer_in_memory",
                                 "leaf_module",
                                 "stage3_gather_16bit_weights_on_model_save",
                                 "gather_16bit_weights_on_model_save",
                                 "stage3_gather_fp16_weights_on_model_save",
                                 "stage3_model_persistence_threshold",
                                 "model_persistence_threshold",
                                 "stage3_module_granularity_threshold",
                                 "module_granularity_threshold"});
  // Each is accepted and noted for the result's warnings, and changes nothing else.
  const Strategy plain = ds("", "");
  for (const DeepSpeedKey& k : deepspeed_top_keys_without_effect()) {
    Strategy s = ds(std::string("\"") + k.key + "\": {}", "");
    CHECK(s.keys_without_effect == std::vector<std::string>{k.key});
    s.keys_without_effect.clear();
    CHECK(s == plain);
  }
  for (const DeepSpeedKey& k : deepspeed_zero_keys_without_effect()) {
    if (std::string(k.key).find("gather") != std::string::npos &&
        std::string(k.key).find("stage3_") == std::string::npos)
      continue;  // checked below with its alias
    Strategy s = ds("", std::string("\"") + k.key + "\": 0");
    CHECK(s.keys_without_effect ==
          std::vector<std::string>{"zero_optimization." + std::string(k.key)});
    s.keys_without_effect.clear();
    CHECK(s == plain);
  }
  // A key and its "stage3_" alias together: an error naming both.
  expect_input_error(
      [] {
        ds("", R"("module_granularity_threshold": 0, "stage3_module_granularity_threshold": 0)");
      },
      "ds.json", "/zero_optimization/module_granularity_threshold", "given twice");
}

TEST_CASE("configs shaped like the documentation's examples load") {
  const Strategy nvme = load_deepspeed(kDocumented + "zero3-offload-nvme-aio.json");
  CHECK(nvme.offload_optimizer == OffloadDevice::Nvme);
  CHECK(nvme.offload_param == OffloadDevice::Nvme);
  CHECK(nvme.dtype == "fp16");
  CHECK(nvme.sub_group_elems == 1'000'000'000);
  CHECK(nvme.prefetch_bucket_elems == 1'000'000);
  CHECK(nvme.keys_without_effect ==
        std::vector<std::string>{"steps_per_print", "wall_clock_breakdown", "aio",
                                 "zero_optimization.stage3_gather_16bit_weights_on_model_save"});

  const Strategy legacy = load_deepspeed(kDocumented + "bf16-legacy-keys.json");
  CHECK(legacy.dtype == "bf16");                           // from "bfloat16"
  CHECK(legacy.offload_optimizer == OffloadDevice::None);  // cpu_offload false
  CHECK(legacy.train_batch_size == 64);
  CHECK(legacy.micro_batch_sequences == 4);

  const Strategy loco = load_deepspeed(kDocumented + "zeropp-loco.json");
  CHECK((loco.qwz && loco.hpz && loco.qgz));
  CHECK(loco.hpz_size == 8);
  CHECK(loco.keys_without_effect ==
        std::vector<std::string>{"steps_per_print", "zero_optimization.zeropp_loco_param"});
}

TEST_CASE("older spellings: bfloat16 and the deprecated cpu_offload booleans") {
  CHECK(ds_text(R"({"bfloat16": {"enabled": true}, "zero_optimization": {"stage": 3}})").dtype ==
        "bf16");
  expect_input_error(
      [] {
        ds_text(R"({"bf16": {"enabled": true}, "bfloat16": {"enabled": true},
                    "zero_optimization": {"stage": 3}})");
      },
      "ds.json", "/bfloat16", "given twice");
  const Strategy cpu = ds("", R"("cpu_offload": true, "cpu_offload_use_pin_memory": true)");
  CHECK(cpu.offload_optimizer == OffloadDevice::Cpu);
  CHECK(!cpu.offload_pageable);
  const Strategy params = ds("", R"("cpu_offload_param": true)");
  CHECK(params.offload_param == OffloadDevice::Cpu);
  CHECK(params.offload_pageable);  // cpu_offload_use_pin_memory defaults to false
  expect_input_error(
      [] { ds("", R"("cpu_offload": true, "offload_optimizer": {"device": "cpu"})"); }, "ds.json",
      "/zero_optimization/cpu_offload", "deprecated");
}

TEST_CASE("settings that would change the step in ways not modelled are refused with the reason") {
  expect_input_error([] { ds("", R"("stage3_use_all_reduce_for_fetch_params": true)"); }, "ds.json",
                     "/zero_optimization/stage3_use_all_reduce_for_fetch_params", "not modelled");
  expect_input_error([] { ds("", R"("allgather_sequential": true)"); }, "ds.json",
                     "/zero_optimization/allgather_sequential", "not modelled");
  expect_input_error([] { ds("", R"("zenflow": {})"); }, "ds.json", "/zero_optimization/zenflow",
                     "not modelled");
  // Their defaults are accepted.
  CHECK(
      ds("", R"("stage3_use_all_reduce_for_fetch_params": false, "allgather_sequential": false)") ==
      ds("", ""));
}

TEST_CASE("every unknown key of a config at once, each with its closest known key") {
  const auto e = caught_input_error([] {
    ds(R"("steps_per_prnt": 10, "gradient_cliping": 1.0)",
       R"("overlap_com": true, "stage3_prefetch_bucket_sise": 5,
          "offload_optimizer": {"devise": "cpu"})");
  });
  // One error names the top level's first and lists the others of every object.
  CHECK(e.path() == "/gradient_cliping");
  CHECK(e.rule().find("(did you mean 'gradient_clipping'?)") != std::string::npos);
  CHECK(e.rule().find("'steps_per_prnt' (did you mean 'steps_per_print'?)") != std::string::npos);
  CHECK(e.rule().find("; /zero_optimization/overlap_com: unknown key 'overlap_com' (did you mean "
                      "'overlap_comm'?); also unknown here: 'stage3_prefetch_bucket_sise' (did "
                      "you mean 'stage3_prefetch_bucket_size'?); "
                      "/zero_optimization/offload_optimizer/devise: unknown key 'devise' (did "
                      "you mean 'device'?) (allowed: train_batch_size,") != std::string::npos);
  const auto z = caught_input_error(
      [] { ds("", R"("overlap_com": true, "stage3_prefetch_bucket_sise": 5)"); });
  CHECK(z.path() == "/zero_optimization/overlap_com");
  CHECK(z.rule().find("(did you mean 'overlap_comm'?)") != std::string::npos);
  CHECK(z.rule().find(
            "'stage3_prefetch_bucket_sise' (did you mean 'stage3_prefetch_bucket_size'?)") !=
        std::string::npos);
}

TEST_CASE("contiguous_gradients: read for stage 3, without effect (and said) for stages 1 and 2") {
  CHECK(ds("", "").contiguous_gradients);  // DeepSpeed's default (config.py)
  const Strategy off = ds("", R"("contiguous_gradients": false)");
  CHECK_FALSE(off.contiguous_gradients);
  CHECK(off.keys_without_effect.empty());
  CHECK(ds("", R"("contiguous_gradients": true)") == ds("", ""));
  const Strategy s2 = ds_text(R"({"bf16": {"enabled": true},
                 "zero_optimization": {"stage": 2, "contiguous_gradients": false}})");
  CHECK(s2.keys_without_effect ==
        std::vector<std::string>{"zero_optimization.contiguous_gradients"});
  expect_input_error([] { ds("", R"("contiguous_gradients": 1)"); }, "ds.json",
                     "/zero_optimization/contiguous_gradients", "must be true or false");
}

TEST_CASE("sub_group_size sizes the FP32 gradient copy the optimizer step holds") {
  const ModelShape m = load_model("llama-2-70b");
  const double psi = static_cast<double>(total_param_count(m));
  auto run = [&](const Strategy& s) {
    MemoryInputs in;
    in.model = &m;
    in.strategy = &s;
    in.world = 8;
    in.gpus_per_node = 8;
    in.tokens = 512;
    in.seq = 512;
    in.checkpointing = true;
    in.attention = AttentionImpl::Flash;
    in.capacity_bytes = 1e12;
    in.reserved_bytes = 0;
    return estimate_memory(in);
  };
  Strategy s = ds("", "");
  const MemoryEstimate e = run(s);
  const double transient = e.component("gathered_params") + e.component("grad_buckets") +
                           e.component("quant_buffers") + e.component("activations");
  // DeepSpeed's default 1e9 elements: 4 GB of FP32 gradients, beyond the backward's buffers.
  CHECK(psi / 8 > 1e9);
  CHECK(e.component("optimizer_step_grads_fp32") ==
        zerosim::testing::Approx(std::max(0.0, 4e9 - transient)));
  // A sub-group larger than the partition holds the whole partition's gradients.
  s.sub_group_elems = 1'000'000'000'000;
  CHECK(run(s).component("optimizer_step_grads_fp32") ==
        zerosim::testing::Approx(std::max(0.0, 4 * psi / 8 - transient)));
  CHECK(run(s).component("optimizer_step_grads_fp32") > 0);
  // Offloaded optimizer: the FP32 gradients live on the host.
  s.offload_optimizer = OffloadDevice::Cpu;
  CHECK(run(s).component("optimizer_step_grads_fp32") == 0);
  // Read from the config.
  CHECK(ds("", R"("sub_group_size": 100000000)").sub_group_elems == 100'000'000);
}
