// FSDP configs (LLM Foundry / Composer and Hugging Face Accelerate YAML): each modelled key maps
// onto the flag it stands for, keys without effect are listed with why, refused values name the
// file, the key and the rule, unknown keys are reported all at once with their closest known key,
// and the shipped samples load.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sim/core/yaml_io.hpp"
#include "sim/strategy/fsdp_config.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

FsdpConfig cfg(const std::string& yaml) {
  return parse_fsdp_config(parse_yaml_text(yaml, "c.yaml"), "c.yaml");
}

// flag -> value of the config's settings (a flag set twice: the last, as applied).
std::map<std::string, std::string> settings(const FsdpConfig& c) {
  std::map<std::string, std::string> m;
  for (const auto& s : c.settings) m[s.flag] = s.value;
  return m;
}

const std::string kSamples = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/fsdp/";

}  // namespace

TEST_CASE("LLM Foundry's pretrain fsdp_config: FULL_SHARD, PURE BF16, checkpointing") {
  const FsdpConfig c = load_fsdp_config(kSamples + "llm-foundry-mpt-7b.yaml");
  CHECK(c.format == "LLM Foundry / Composer");
  const auto s = settings(c);
  CHECK(s.at("--strategy") == "fsdp");
  CHECK(s.at("--fsdp-param-dtype") == "bf16");
  CHECK(s.at("--fsdp-reduce-dtype") == "bf16");
  CHECK(s.at("--activation-checkpointing") == "true");
  CHECK(s.at("--fsdp-limit-all-gathers") == "true");
  CHECK(c.settings.front().flag == "--strategy");
  REQUIRE(c.keys_without_effect.size() == 1);
  CHECK(c.keys_without_effect[0].rfind("/fsdp_config/activation_checkpointing_reentrant:", 0) == 0);
}

TEST_CASE("Composer's sharding strategies, prefetch and MixedPrecision presets") {
  CHECK(settings(cfg("fsdp_config: {sharding_strategy: SHARD_GRAD_OP}")).at("--strategy") ==
        "fsdp-grad-op");
  const auto hybrid = settings(
      cfg("fsdp_config: {sharding_strategy: HYBRID_SHARD, data_parallel_shard_degree: 16}"));
  CHECK(hybrid.at("--strategy") == "fsdp-hybrid");
  CHECK(hybrid.at("--hsdp-size") == "16");
  const auto s =
      settings(cfg("fsdp_config: {backward_prefetch: BACKWARD_POST, forward_prefetch: true, "
                   "limit_all_gathers: false}"));
  CHECK(s.at("--fsdp-backward-prefetch") == "post");
  CHECK(s.at("--fsdp-forward-prefetch") == "true");
  CHECK(s.at("--fsdp-limit-all-gathers") == "false");
  CHECK(s.at("--activation-checkpointing") == "false");  // Composer's default
  CHECK(settings(cfg("fsdp_config: {backward_prefetch: NONE}")).at("--fsdp-backward-prefetch") ==
        "none");
  // PURE: all low precision; DEFAULT: FP32 parameters, low-precision reduction; FULL: FP32.
  const std::map<std::string, std::pair<std::string, std::string>> presets = {
      {"PURE", {"fp16", "fp16"}}, {"DEFAULT", {"fp32", "fp16"}}, {"FULL", {"fp32", "fp32"}}};
  for (const auto& kv : presets) {
    // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
    const auto& mode = kv.first;
    const auto& dtypes = kv.second;
    CAPTURE(mode);
    const auto m =
        settings(cfg("precision: amp_fp16\nfsdp_config: {mixed_precision: " + mode + "}"));
    CHECK(m.at("--fsdp-param-dtype") == dtypes.first);
    CHECK(m.at("--fsdp-reduce-dtype") == dtypes.second);
  }
  const FsdpConfig absent = cfg("fsdp_config: {}");
  CHECK(settings(absent).at("--fsdp-param-dtype") == "fp32");  // Composer's DEFAULT
  CHECK(settings(absent).at("--fsdp-reduce-dtype") == "bf16");
  CHECK(absent.defaults_taken.size() == 3);  // strategy, mixed precision, checkpointing
  const auto dict = settings(
      cfg("fsdp_config:\n  mixed_precision: {param_dtype: bfloat16, reduce_dtype: float32, "
          "buffer_dtype: bf16}"));
  CHECK(dict.at("--fsdp-param-dtype") == "bf16");
  CHECK(dict.at("--fsdp-reduce-dtype") == "fp32");
  // reduce_dtype not given: the parameters' dtype, as PyTorch's MixedPrecision reduces.
  CHECK(settings(cfg("fsdp_config: {mixed_precision: {param_dtype: fp16}}"))
            .at("--fsdp-reduce-dtype") == "fp16");
}

TEST_CASE("Accelerate's config: names or 1-based indices, its prefetch names, mixed_precision") {
  const FsdpConfig c = load_fsdp_config(kSamples + "accelerate-fsdp.yaml");
  CHECK(c.format == "Hugging Face Accelerate");
  const auto s = settings(c);
  CHECK(s.at("--strategy") == "fsdp");
  CHECK(s.at("--fsdp-backward-prefetch") == "pre");
  CHECK(s.at("--fsdp-forward-prefetch") == "false");
  CHECK(s.at("--activation-checkpointing") == "true");
  CHECK(s.at("--fsdp-param-dtype") == "bf16");
  CHECK(s.at("--fsdp-reduce-dtype") == "bf16");
  // fsdp_config's 5 keys without effect, and the top level's 13 besides distributed_type,
  // fsdp_config, mixed_precision and use_cpu.
  CHECK(c.keys_without_effect.size() == 5 + 13);
  const std::string top = "distributed_type: FSDP\nmixed_precision: fp16\n";
  const std::map<std::string, std::string> by_index = {{"1", "fsdp"},
                                                       {"2", "fsdp-grad-op"},
                                                       {"4", "fsdp-hybrid"},
                                                       {"SHARD_GRAD_OP", "fsdp-grad-op"}};
  for (const auto& kv : by_index) {
    // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
    const auto& v = kv.first;
    const auto& name = kv.second;
    CAPTURE(v);
    CHECK(
        settings(cfg(top + "fsdp_config: {fsdp_sharding_strategy: " + v + "}")).at("--strategy") ==
        name);
  }
  CHECK(settings(cfg(top + "fsdp_config: {fsdp_reshard_after_forward: HYBRID_SHARD}"))
            .at("--strategy") == "fsdp-hybrid");
  CHECK(settings(cfg(top + "fsdp_config: {fsdp_backward_prefetch: NO_PREFETCH}"))
            .at("--fsdp-backward-prefetch") == "none");
  CHECK(settings(cfg(top + "fsdp_config: {fsdp_backward_prefetch_policy: BACKWARD_POST}"))
            .at("--fsdp-backward-prefetch") == "post");
  CHECK(settings(cfg(top + "fsdp_config: {}")).at("--fsdp-param-dtype") == "fp16");
  // fsdp_version 2: fully_shard, with its reshard_after_forward.
  const auto v2 =
      settings(cfg(top + "fsdp_config: {fsdp_version: 2, fsdp_reshard_after_forward: false}"));
  CHECK(v2.at("--strategy") == "fsdp2");
  CHECK(v2.at("--fsdp-reshard-after-forward") == "false");
  CHECK(v2.count("--fsdp-backward-prefetch") == 0);
}

TEST_CASE("refused values name the file, the key and the rule") {
  const std::string acc = "distributed_type: FSDP\nmixed_precision: bf16\n";
  const struct {
    std::string yaml, path, rule;
  } cases[] = {
      {"fsdp_config: {sharding_strategy: NO_SHARD}", "/fsdp_config/sharding_strategy",
       "NO_SHARD (replicated"},
      {"fsdp_config: {sharding_strategy: _HYBRID_SHARD_ZERO2}", "/fsdp_config/sharding_strategy",
       "not modelled"},
      {"fsdp_config: {sharding_strategy: FULL}", "/fsdp_config/sharding_strategy",
       "is not one of FULL_SHARD"},
      {"fsdp_config: {mixed_precision: HALF}", "/fsdp_config/mixed_precision",
       "is not one of PURE, DEFAULT or FULL"},
      {"fsdp_config: {mixed_precision: {param_dtype: int8}}",
       "/fsdp_config/mixed_precision/param_dtype", "is not one of bf16"},
      {"fsdp_config: {activation_checkpointing: 'yes'}", "/fsdp_config/activation_checkpointing",
       "must be true or false"},
      {"fsdp_config: {cpu_offload: true}", "/fsdp_config/cpu_offload", "not modelled; use false"},
      {"fsdp_config: {backward_prefetch_limit: 2}", "/fsdp_config/backward_prefetch_limit",
       "not modelled; use 1"},
      {"fsdp_config: {data_parallel_shard_degree: 8}", "/fsdp_config/data_parallel_shard_degree",
       "needs sharding_strategy HYBRID_SHARD"},
      {"precision: fp32\nfsdp_config: {}", "/precision", "FP32 training is not modelled"},
      {"fsdp_config: 3", "/fsdp_config", "must be a mapping"},
      {"model: {}", "", "missing required key 'fsdp_config'"},
      {acc + "fsdp_config: {fsdp_version: 2, fsdp_sharding_strategy: FULL_SHARD}",
       "/fsdp_config/fsdp_sharding_strategy", "is FSDP1's"},
      {acc + "fsdp_config: {fsdp_version: 2, fsdp_reshard_after_forward: FULL_SHARD}",
       "/fsdp_config/fsdp_reshard_after_forward", "must be true or false"},
      {acc + "fsdp_config: {fsdp_version: 3}", "/fsdp_config/fsdp_version", "is not 1 or 2"},
      {acc + "fsdp_config: {fsdp_sharding_strategy: 6}", "/fsdp_config/fsdp_sharding_strategy",
       "is not 1 (FULL_SHARD) .. 5"},
      {acc + "fsdp_config: {fsdp_sharding_strategy: 3}", "/fsdp_config/fsdp_sharding_strategy",
       "NO_SHARD"},
      {acc + "fsdp_config: {fsdp_auto_wrap_policy: SIZE_BASED_WRAP}",
       "/fsdp_config/fsdp_auto_wrap_policy", "use TRANSFORMER_BASED_WRAP"},
      {acc + "fsdp_config: {fsdp_offload_params: true}", "/fsdp_config/fsdp_offload_params",
       "not modelled"},
      {acc + "fsdp_config: {fsdp_backward_prefetch: BACKWARD_PRE, fsdp_backward_prefetch_policy: "
             "BACKWARD_PRE}",
       "/fsdp_config/fsdp_backward_prefetch_policy", "given twice"},
      {"distributed_type: MULTI_GPU\nmixed_precision: bf16\nfsdp_config: {}", "/distributed_type",
       "is not FSDP"},
      {"distributed_type: FSDP\nmixed_precision: 'no'\nfsdp_config: {}", "/mixed_precision",
       "FP32 training"},
      {"distributed_type: FSDP\nfsdp_config: {}", "", "missing required key 'mixed_precision'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.yaml);
    expect_input_error([&] { cfg(c.yaml); }, "c.yaml", c.path, c.rule);
  }
}

TEST_CASE("unknown keys are reported all at once, each with the closest known key") {
  const InputError e = caught_input_error(
      [] { cfg("fsdp_config: {sharding_stratgy: FULL_SHARD, limit_allgathers: true}"); });
  // Keys in name order: the first named in the path, the others in the rule.
  CHECK(e.path() == "/fsdp_config/limit_allgathers");
  CHECK(e.rule().find("did you mean 'limit_all_gathers'") != std::string::npos);
  CHECK(e.rule().find("'sharding_stratgy' (did you mean 'sharding_strategy'?)") !=
        std::string::npos);
  const InputError a = caught_input_error([] {
    cfg("distributed_type: FSDP\nmixed_precision: bf16\nfsdp_config: {fsdp_forward_prefech: "
        "true}\nnum_machine: 2\n");
  });
  CHECK(a.path() == "/num_machine");
  CHECK(a.rule().find("did you mean 'num_machines'") != std::string::npos);
}
