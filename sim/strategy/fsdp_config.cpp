#include "sim/strategy/fsdp_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "sim/core/yaml_io.hpp"

namespace zerosim {

namespace {

// A key accepted without effect on the modelled step, and why it has none.
struct KeyWithoutEffect {
  const char* key;
  const char* why;
};

// A key whose only accepted value is the one the step model runs; any other is refused.
struct KeyFixed {
  const char* key;
  json modelled;     // the accepted value (type checked against it)
  const char* what;  // what another value would do, not modelled
};

void add(FsdpConfig& c, const char* flag, std::string value, const std::string& key) {
  c.settings.push_back({flag, std::move(value), key});
}

// "a, b or c".
std::string one_of(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return out;
}

// A string value among `names`; its index.
std::size_t choice(const JsonReader& v, const std::vector<std::string_view>& names) {
  const std::string s = v.get_string();
  const auto it = std::find(names.begin(), names.end(), s);
  if (it == names.end()) v.fail(fmt::format("'{}' is not one of {}", s, one_of(names)));
  return static_cast<std::size_t>(it - names.begin());
}

// PyTorch's ShardingStrategy (torch/distributed/fsdp/api.py) as the strategy vocabulary names it;
// NO_SHARD (DDP) and _HYBRID_SHARD_ZERO2 are refused.
std::string strategy_of_sharding(const JsonReader& v, std::string_view name) {
  if (name == "FULL_SHARD") return "fsdp";
  if (name == "SHARD_GRAD_OP") return "fsdp-grad-op";
  if (name == "HYBRID_SHARD") return "fsdp-hybrid";
  if (name == "NO_SHARD")
    v.fail(
        "NO_SHARD (replicated parameters, gradients all-reduced: DDP) is not modelled; use "
        "FULL_SHARD, SHARD_GRAD_OP or HYBRID_SHARD");
  if (name == "_HYBRID_SHARD_ZERO2" || name == "HYBRID_SHARD_ZERO2")
    v.fail(
        "_HYBRID_SHARD_ZERO2 (SHARD_GRAD_OP within a node) is not modelled; use HYBRID_SHARD "
        "or SHARD_GRAD_OP");
  v.fail(fmt::format("'{}' is not one of FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD", name));
  return "";
}

// A MixedPrecision dtype name as Composer's get_torch_dtype reads it, as the --fsdp-*-dtype flags
// name it; null: FP32 (no cast: PyTorch's MixedPrecision leaves the original dtype).
std::string dtype_value(const JsonReader& v) {
  if (v.value().is_null()) return "fp32";
  const std::size_t i =
      choice(v, {"bf16", "bfloat16", "fp16", "float16", "half", "fp32", "float32", "float"});
  return i < 2 ? "bf16" : i < 5 ? "fp16" : "fp32";
}

// The keys of `r` in `table`, noted without effect; each value's type is not checked beyond YAML.
void note_without_effect(const JsonReader& r, const std::string& path,
                         const std::vector<KeyWithoutEffect>& table, FsdpConfig& c) {
  for (const KeyWithoutEffect& k : table)
    if (r.has(k.key)) c.keys_without_effect.push_back(fmt::format("{}{}: {}", path, k.key, k.why));
}

// Keys whose value must be the modelled one: its type as the modelled value's, and equal to it.
void check_fixed(const JsonReader& r, const std::vector<KeyFixed>& table) {
  for (const KeyFixed& k : table) {
    if (!r.has(k.key)) continue;
    const JsonReader v = r.at(k.key);
    if (k.modelled.is_boolean()) v.get_bool();
    if (k.modelled.is_number_integer() && !v.value().is_null()) v.get_int();
    if (v.value() != k.modelled && !(k.modelled.is_null() && v.value().is_null()))
      v.fail(fmt::format("{} is not modelled; use {}", k.what, k.modelled.dump()));
  }
}

// ---- LLM Foundry / Composer (composer/utils/parallelism.py, FSDPConfig) ----

const std::vector<KeyWithoutEffect>& composer_without_effect() {
  static const std::vector<KeyWithoutEffect> keys = {
      {"activation_checkpointing_reentrant",
       "reentrant or not, each block's forward is recomputed once in backward"},
      {"sync_module_states", "a broadcast of rank 0's weights at initialisation, before training"},
      {"use_orig_params", "how parameters view the flat parameter; the same collectives"},
      {"state_dict_type", "the checkpoint format"},
      {"load_monolith_rank0_only", "checkpoint loading"},
      {"load_planner", "checkpoint loading"},
      {"save_planner", "checkpoint saving"},
      {"sharded_ckpt_prefix_dir", "checkpoint saving"},
      {"verbose", "logging"},
  };
  return keys;
}

const std::vector<KeyFixed>& composer_fixed() {
  static const std::vector<KeyFixed> keys = {
      {"cpu_offload", false, "offloading parameters to the CPU (FSDP's CPUOffload)"},
      {"activation_cpu_offload", false, "offloading activations to the CPU"},
      {"auto_wrap", true, "wrapping the model other than one FSDP unit per block"},
      {"backward_prefetch_limit", 1, "prefetching more than one unit ahead in backward"},
      {"forward_prefetch_limit", 1, "prefetching more than one unit ahead in forward"},
      {"keep_low_precision_grads", false, "keeping gradients in the low precision"},
      {"te_checkpoint_wrapper", false, "TransformerEngine's checkpoint wrapper"},
      {"te_shard_fp8_weight", false, "TransformerEngine's FP8 weights"},
      {"ignored_modules", nullptr, "modules left out of FSDP"},
      {"process_group", nullptr, "a process group of its own"},
      {"data_parallel_replicate_degree", nullptr,
       "a replicate degree (HYBRID_SHARD's replicas are the world over the shard degree: give "
       "data_parallel_shard_degree)"},
  };
  return keys;
}

// Composer's get_mixed_precision: PURE (everything in the low precision), DEFAULT (parameters in
// FP32, reduction and buffers in the low precision), FULL (FP32), or a dict of dtypes.
void read_composer_mixed_precision(const JsonReader& f, const std::string& low, FsdpConfig& c) {
  const std::string key = "/fsdp_config/mixed_precision";
  std::string param = "fp32", reduce = low;
  if (!f.has("mixed_precision")) {
    c.defaults_taken.push_back(
        "mixed_precision not given: Composer's DEFAULT (parameters gathered in FP32, gradients "
        "reduced in the low precision; older Composer releases meant BF16 parameters and FP32 "
        "reduction by DEFAULT)");
  } else if (const JsonReader m = f.at("mixed_precision"); m.value().is_object()) {
    m.require_object({"param_dtype", "reduce_dtype", "buffer_dtype", "keep_low_precision_grads"});
    param = m.has("param_dtype") ? dtype_value(m.at("param_dtype")) : "fp32";
    reduce = m.has("reduce_dtype") && !m.at("reduce_dtype").value().is_null()
                 ? dtype_value(m.at("reduce_dtype"))
                 : param;
    if (m.has("buffer_dtype")) dtype_value(m.at("buffer_dtype"));  // buffers: no modelled bytes
    check_fixed(m, {{"keep_low_precision_grads", false, "keeping gradients in the low precision"}});
  } else {
    const std::size_t mode = choice(m, {"PURE", "DEFAULT", "FULL"});
    param = mode == 0 ? low : "fp32";
    reduce = mode == 2 ? "fp32" : low;
  }
  add(c, "--fsdp-param-dtype", param, key);
  add(c, "--fsdp-reduce-dtype", reduce, key);
}

void read_composer(const JsonReader& top, FsdpConfig& c) {
  c.format = "LLM Foundry / Composer";
  const JsonReader f = top.at("fsdp_config");
  std::vector<std::string_view> known = {
      "sharding_strategy", "mixed_precision",   "activation_checkpointing",  "backward_prefetch",
      "forward_prefetch",  "limit_all_gathers", "data_parallel_shard_degree"};
  for (const auto& k : composer_without_effect()) known.push_back(k.key);
  for (const auto& k : composer_fixed()) known.push_back(k.key);
  f.require_object(known);
  const std::string p = "/fsdp_config/";
  std::string strategy = "fsdp";
  if (f.has("sharding_strategy"))
    strategy =
        strategy_of_sharding(f.at("sharding_strategy"), f.at("sharding_strategy").get_string());
  add(c, "--strategy", strategy, p + "sharding_strategy");
  if (!f.has("sharding_strategy"))
    c.defaults_taken.push_back("sharding_strategy not given: FULL_SHARD (Composer's default)");
  if (f.has("data_parallel_shard_degree")) {
    const JsonReader d = f.at("data_parallel_shard_degree");
    const auto degree = d.get_int();
    if (degree != -1) {
      if (strategy != "fsdp-hybrid")
        d.fail(
            fmt::format("{} shards over part of the world, which needs sharding_strategy "
                        "HYBRID_SHARD (or -1: the whole world)",
                        degree));
      if (degree < 1) d.fail("must be -1 (the world) or at least 1");
      add(c, "--hsdp-size", std::to_string(degree), p + "data_parallel_shard_degree");
    }
  }
  // The run's precision (Composer's Trainer argument, LLM Foundry's top-level `precision`): the
  // low precision of the MixedPrecision presets.
  std::string low = "bf16";
  if (top.has("precision")) {
    const std::size_t i =
        choice(top.at("precision"), {"amp_bf16", "bf16", "amp_fp16", "fp16", "fp32", "amp_fp8"});
    if (i == 4) top.at("precision").fail("FP32 training is not modelled; use amp_bf16 or amp_fp16");
    if (i == 5) top.at("precision").fail("FP8 training is not modelled; use amp_bf16 or amp_fp16");
    low = i < 2 ? "bf16" : "fp16";
  }
  read_composer_mixed_precision(f, low, c);
  if (f.has("activation_checkpointing"))
    add(c, "--activation-checkpointing",
        f.at("activation_checkpointing").get_bool() ? "true" : "false",
        p + "activation_checkpointing");
  else {
    add(c, "--activation-checkpointing", "false", p + "activation_checkpointing");
    c.defaults_taken.push_back("activation_checkpointing not given: off (Composer's default)");
  }
  if (f.has("backward_prefetch")) {
    static const char* const values[] = {"pre", "post", "none"};
    add(c, "--fsdp-backward-prefetch",
        values[choice(f.at("backward_prefetch"), {"BACKWARD_PRE", "BACKWARD_POST", "NONE"})],
        p + "backward_prefetch");
  }
  for (const auto& [key, flag] : {std::pair{"forward_prefetch", "--fsdp-forward-prefetch"},
                                  std::pair{"limit_all_gathers", "--fsdp-limit-all-gathers"}})
    if (f.has(key)) add(c, flag, f.at(key).get_bool() ? "true" : "false", p + key);
  check_fixed(f, composer_fixed());
  note_without_effect(f, p, composer_without_effect(), c);
}

// ---- Hugging Face Accelerate (accelerate/utils/dataclasses.py, FullyShardedDataParallelPlugin;
// the keys `accelerate config` writes, commands/config/cluster.py) ----

const std::vector<KeyWithoutEffect>& accelerate_without_effect() {
  static const std::vector<KeyWithoutEffect> keys = {
      {"fsdp_transformer_layer_cls_to_wrap",
       "names the block class: each block is one FSDP unit, as modelled"},
      {"fsdp_min_num_params", "read by SIZE_BASED_WRAP only"},
      {"fsdp_state_dict_type", "the checkpoint format"},
      {"fsdp_use_orig_params", "how parameters view the flat parameter; the same collectives"},
      {"fsdp_cpu_ram_efficient_loading", "model loading, before training"},
      {"fsdp_sync_module_states", "a broadcast of rank 0's weights at initialisation"},
  };
  return keys;
}

const std::vector<KeyWithoutEffect>& accelerate_top_without_effect() {
  static const std::vector<KeyWithoutEffect> keys = {
      {"compute_environment", "where the job runs"},
      {"debug", "debug checks"},
      {"downcast_bf16", "TPUs only"},
      {"enable_cpu_affinity", "CPU thread placement"},
      {"gpu_ids", "which GPUs of a node; the cluster comes from --cluster and --nodes"},
      {"machine_rank", "this machine's rank"},
      {"main_process_ip", "the rendezvous address"},
      {"main_process_port", "the rendezvous port"},
      {"main_training_function", "the script's entry point"},
      {"num_machines", "the nodes come from --cluster and --nodes"},
      {"num_processes", "the GPUs come from --cluster and --nodes"},
      {"rdzv_backend", "the rendezvous"},
      {"same_network", "the rendezvous"},
      {"tpu_env", "TPUs only"},
      {"tpu_use_cluster", "TPUs only"},
      {"tpu_use_sudo", "TPUs only"},
      {"dynamo_config", "torch.compile of the model"},
  };
  return keys;
}

// fsdp_sharding_strategy (and fsdp_reshard_after_forward, its newer name for FSDP1): a name or
// Accelerate's 1-based index into ShardingStrategy.
std::string accelerate_strategy(const JsonReader& v) {
  static const char* const by_index[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                         "HYBRID_SHARD_ZERO2"};
  if (v.value().is_number()) {
    const auto i = v.get_int();
    if (i < 1 || i > 5)
      v.fail(fmt::format("{} is not 1 (FULL_SHARD) .. 5 (HYBRID_SHARD_ZERO2)", i));
    return strategy_of_sharding(v, by_index[i - 1]);
  }
  return strategy_of_sharding(v, v.get_string());
}

// FSDP1 (fsdp_version 1): the sharding strategy (fsdp_sharding_strategy, or its newer name
// fsdp_reshard_after_forward) and the prefetch knobs.
void read_accelerate_fsdp1(const JsonReader& f, FsdpConfig& c) {
  const std::string p = "/fsdp_config/";
  if (f.has("fsdp_sharding_strategy") && f.has("fsdp_reshard_after_forward"))
    f.at("fsdp_reshard_after_forward")
        .fail(
            "given twice: as 'fsdp_reshard_after_forward' (the newer name) and as "
            "'fsdp_sharding_strategy'");
  const char* sk =
      f.has("fsdp_reshard_after_forward") ? "fsdp_reshard_after_forward" : "fsdp_sharding_strategy";
  add(c, "--strategy", f.has(sk) ? accelerate_strategy(f.at(sk)) : "fsdp", p + sk);
  if (f.has("fsdp_backward_prefetch") && f.has("fsdp_backward_prefetch_policy"))
    f.at("fsdp_backward_prefetch_policy")
        .fail(
            "given twice: as 'fsdp_backward_prefetch_policy' (the older name) and as "
            "'fsdp_backward_prefetch'");
  for (const char* k : {"fsdp_backward_prefetch", "fsdp_backward_prefetch_policy"})
    if (f.has(k)) {
      static const char* const values[] = {"pre", "post", "none"};
      add(c, "--fsdp-backward-prefetch",
          values[choice(f.at(k), {"BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH"})], p + k);
    }
  if (f.has("fsdp_forward_prefetch"))
    add(c, "--fsdp-forward-prefetch", f.at("fsdp_forward_prefetch").get_bool() ? "true" : "false",
        p + "fsdp_forward_prefetch");
  if (!f.has(sk))
    c.defaults_taken.push_back(
        "fsdp_sharding_strategy not given: FULL_SHARD (Accelerate's default)");
}

// FSDP2 (fsdp_version 2, fully_shard): fsdp_reshard_after_forward true or false; FSDP1's keys
// are refused (FSDP2 has no sharding strategy names and prefetches one module implicitly).
void read_accelerate_fsdp2(const JsonReader& f, FsdpConfig& c) {
  const std::string p = "/fsdp_config/";
  for (const char* k : {"fsdp_sharding_strategy", "fsdp_backward_prefetch",
                        "fsdp_backward_prefetch_policy", "fsdp_forward_prefetch"})
    if (f.has(k))
      f.at(k).fail(
          "is FSDP1's; with fsdp_version 2 (fully_shard) give fsdp_reshard_after_forward true or "
          "false (FSDP2 prefetches the next module implicitly)");
  add(c, "--strategy", "fsdp2", p + "fsdp_version");
  if (f.has("fsdp_reshard_after_forward"))
    add(c, "--fsdp-reshard-after-forward",
        f.at("fsdp_reshard_after_forward").get_bool() ? "true" : "false",
        p + "fsdp_reshard_after_forward");
}

// Accelerate's MixedPrecision: parameters, reduction and buffers all in the chosen precision.
void read_accelerate_precision(const JsonReader& top, FsdpConfig& c) {
  if (!top.has("mixed_precision"))
    top.fail(
        "missing required key 'mixed_precision' (bf16 or fp16; FP32 training is not "
        "modelled)");
  const JsonReader m = top.at("mixed_precision");
  const std::size_t i = choice(m, {"bf16", "fp16", "no", "fp8"});
  if (i == 2) m.fail("'no' (FP32 training) is not modelled; use bf16 or fp16");
  if (i == 3) m.fail("FP8 training is not modelled; use bf16 or fp16");
  const std::string low = i == 0 ? "bf16" : "fp16";
  add(c, "--fsdp-param-dtype", low, "/mixed_precision");
  add(c, "--fsdp-reduce-dtype", low, "/mixed_precision");
}

void read_accelerate(const JsonReader& top, FsdpConfig& c) {
  c.format = "Hugging Face Accelerate";
  std::vector<std::string_view> top_known = {"distributed_type", "fsdp_config", "mixed_precision",
                                             "use_cpu"};
  for (const auto& k : accelerate_top_without_effect()) top_known.push_back(k.key);
  top.require_object(top_known);
  if (top.has("distributed_type") && top.at("distributed_type").get_string() != "FSDP")
    top.at("distributed_type")
        .fail(fmt::format("'{}' is not FSDP (an FSDP config is read)",
                          top.at("distributed_type").get_string()));
  check_fixed(top, {{"use_cpu", false, "training on the CPU"}});
  const JsonReader f = top.at("fsdp_config");
  std::vector<std::string_view> known = {"fsdp_sharding_strategy", "fsdp_reshard_after_forward",
                                         "fsdp_backward_prefetch", "fsdp_backward_prefetch_policy",
                                         "fsdp_forward_prefetch",  "fsdp_activation_checkpointing",
                                         "fsdp_version",           "fsdp_offload_params",
                                         "fsdp_auto_wrap_policy"};
  for (const auto& k : accelerate_without_effect()) known.push_back(k.key);
  f.require_object(known);
  const std::string p = "/fsdp_config/";
  std::int64_t version = 1;
  if (f.has("fsdp_version")) {
    version = f.at("fsdp_version").get_int();
    if (version != 1 && version != 2)
      f.at("fsdp_version").fail(fmt::format("{} is not 1 or 2", version));
  }
  if (version == 2) {
    read_accelerate_fsdp2(f, c);
  } else {
    read_accelerate_fsdp1(f, c);
  }
  add(c, "--activation-checkpointing",
      f.bool_or("fsdp_activation_checkpointing", false) ? "true" : "false",
      p + "fsdp_activation_checkpointing");
  if (!f.has("fsdp_activation_checkpointing"))
    c.defaults_taken.push_back(
        "fsdp_activation_checkpointing not given: off (Accelerate's default)");
  if (f.has("fsdp_auto_wrap_policy"))
    if (choice(f.at("fsdp_auto_wrap_policy"),
               {"TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"}) != 0)
      f.at("fsdp_auto_wrap_policy")
          .fail(
              "units other than one transformer block are not modelled; use "
              "TRANSFORMER_BASED_WRAP");
  check_fixed(
      f, {{"fsdp_offload_params", false, "offloading parameters to the CPU (FSDP's CPUOffload)"}});
  read_accelerate_precision(top, c);
  note_without_effect(f, p, accelerate_without_effect(), c);
  note_without_effect(top, "/", accelerate_top_without_effect(), c);
}

// Accelerate's config names its FSDP keys with "fsdp_" and has a distributed_type.
bool is_accelerate(const JsonReader& top) {
  if (top.has("distributed_type")) return true;
  const json& f = top.at("fsdp_config").value();
  if (!f.is_object()) return false;
  return std::any_of(f.items().begin(), f.items().end(),
                     [](const auto& kv) { return kv.key().rfind("fsdp_", 0) == 0; });
}

}  // namespace

FsdpConfig parse_fsdp_config(const json& doc, const std::string& file) {
  const JsonReader top(doc, file);
  if (!doc.is_object()) top.fail("must be a mapping with an fsdp_config block");
  if (!top.has("fsdp_config"))
    top.fail(
        "missing required key 'fsdp_config' (an LLM Foundry / Composer YAML or a Hugging Face "
        "Accelerate config)");
  if (!top.at("fsdp_config").value().is_object())
    top.at("fsdp_config").fail("must be a mapping of FSDP settings");
  FsdpConfig c;
  c.file = file;
  if (is_accelerate(top))
    read_accelerate(top, c);
  else
    read_composer(top, c);
  return c;
}

FsdpConfig load_fsdp_config(const std::string& path) {
  return parse_fsdp_config(load_yaml_file(path), path);
}

}  // namespace zerosim
