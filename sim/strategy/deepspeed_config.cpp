#include "sim/strategy/deepspeed_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace zerosim {

namespace {

// Where JsonReader::require_object's message lists the allowed keys.
constexpr std::string_view kAllowed = " (allowed: ";

// zero_optimization keys DeepSpeed names with and without "stage3_" (DeepSpeedZeroConfig's
// aliases, v0.19.5 config.py), beyond those read with their own rule below.
constexpr std::pair<const char*, const char*> kStage3Aliases[] = {
    {"stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save"},
    {"stage3_model_persistence_threshold", "model_persistence_threshold"},
    {"stage3_module_granularity_threshold", "module_granularity_threshold"},
};

// An fp16/bf16 section: enabled true, false or "auto" (returned as -1).
int enabled_section(const JsonReader& r, const char* key) {
  if (!r.has(key)) return 0;
  auto sec = r.at(key);
  if (!sec.value().is_object()) sec.fail("must be an object");
  if (!sec.has("enabled")) return 0;
  auto e = sec.at("enabled");
  if (e.value().is_string()) {
    if (e.get_string() != "auto") e.fail("must be true, false or \"auto\"");
    return -1;
  }
  return e.get_bool() ? 1 : 0;
}

bool is_auto(const JsonReader& v) { return v.value().is_string() && v.value() == "auto"; }

// An element count that Hugging Face's Trainer may fill ("auto" -> Strategy::kAuto).
std::int64_t count_or_auto(const JsonReader& v, std::int64_t min) {
  return is_auto(v) ? Strategy::kAuto : v.get_int_at_least(min);
}

// A zero_optimization key DeepSpeed also accepts without its "stage3_" prefix (its config's field
// name; the prefixed form is the alias). Both given: an error. Returns the key the config uses
// (the prefixed one when neither is given).
const char* alias_key(const JsonReader& z, const char* prefixed, const char* plain) {
  if (z.has(prefixed) && z.has(plain))
    z.at(plain).fail(fmt::format("given twice: as '{}' and as '{}'", plain, prefixed));
  return z.has(plain) ? plain : prefixed;
}

// DeepSpeed's deprecated booleans for offloading to the CPU (DeepSpeedZeroConfig's cpu_offload
// and cpu_offload_param, v0.19.5 config.py: the validator turns them into an offload_optimizer or
// offload_param block with device "cpu" and pin_memory from cpu_offload_use_pin_memory). Given
// beside the block they stand for: an error, as DeepSpeed's own validator refuses it.
void read_deprecated_offload(const JsonReader& z, Strategy& s) {
  for (const bool param : {false, true}) {
    const char* key = param ? "cpu_offload_param" : "cpu_offload";
    const char* block = param ? "offload_param" : "offload_optimizer";
    if (!z.has(key) || z.at(key).value().is_null() || !z.at(key).get_bool()) continue;
    if (z.has(block))
      z.at(key).fail(fmt::format("is deprecated and {} is given too; keep {}", block, block));
    if (param && z.at("stage").get_int() != 3)
      z.at(key).fail("offloads parameters, which needs stage 3");
    (param ? s.offload_param : s.offload_optimizer) = OffloadDevice::Cpu;
    const bool pinned = z.has("cpu_offload_use_pin_memory") &&
                        !z.at("cpu_offload_use_pin_memory").value().is_null() &&
                        z.at("cpu_offload_use_pin_memory").get_bool();
    s.offload_pageable = s.offload_pageable || !pinned;
  }
}

// The keys of offload_param (DeepSpeedZeroOffloadParamConfig) or offload_optimizer
// (DeepSpeedZeroOffloadOptimizerConfig).
const std::vector<std::string_view>& offload_keys(bool param) {
  static const std::vector<std::string_view> param_keys = {
      "device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"};
  static const std::vector<std::string_view> optimizer_keys = {
      "device",        "nvme_path",      "buffer_count", "pin_memory",
      "pipeline_read", "pipeline_write", "fast_init",    "ratio"};
  return param ? param_keys : optimizer_keys;
}

// The keys of zero_optimization (zero_section).
const std::vector<std::string_view>& zero_keys() {
  static const std::vector<std::string_view> keys = {
      "stage", "zero_quantized_weights", "zero_hpz_partition_size", "zero_quantized_gradients",
      "overlap_comm", "reduce_scatter", "contiguous_gradients", "reduce_bucket_size",
      "stage3_prefetch_bucket_size", "stage3_max_live_parameters", "stage3_max_reuse_distance",
      "stage3_param_persistence_threshold", "sub_group_size", "allgather_partitions",
      "allgather_bucket_size", "offload_optimizer", "offload_param", "mics_shard_size",
      "mics_hierarchical_params_gather", "cpu_offload", "cpu_offload_param",
      "cpu_offload_use_pin_memory", "stage3_use_all_reduce_for_fetch_params",
      "stage3_allgather_sequential", "zenflow",
      // the same settings under DeepSpeed's field names (without "stage3_")
      "prefetch_bucket_size", "max_live_parameters", "max_reuse_distance",
      "param_persistence_threshold", "use_all_reduce_for_fetch_params", "allgather_sequential",
      // keys without effect on the modelled step (said in the result's warnings)
      "round_robin_gradients", "use_multi_rank_bucket_allreduce", "load_from_fp32_weights",
      "elastic_checkpoint", "ignore_unused_parameters", "legacy_stage1",
      "zero_quantized_nontrainable_weights", "zeropp_loco_param", "memory_efficient_linear",
      "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings",
      "enable_sanity_checks", "save_muon_momentum_buffer_in_memory", "leaf_module",
      "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
      "stage3_gather_fp16_weights_on_model_save", "stage3_model_persistence_threshold",
      "model_persistence_threshold", "stage3_module_granularity_threshold",
      "module_granularity_threshold"};
  return keys;
}

// offload_optimizer and offload_param (DeepSpeed's DeepSpeedZeroOffloadOptimizerConfig and
// DeepSpeedZeroOffloadParamConfig, their keys only). Every key is read: those that change the
// modelled step set it, the others are checked for their type; settings that would change it in
// ways not modelled are refused naming the key.
void read_offload(const JsonReader& z, Strategy& s) {
  read_deprecated_offload(z, s);
  for (const bool param : {false, true}) {
    const char* block = param ? "offload_param" : "offload_optimizer";
    if (!z.has(block)) continue;
    auto o = z.at(block);
    if (!o.value().is_object()) o.fail("must be an object");
    o.require_object(offload_keys(param));
    const std::string dev = o.string_or("device", "none");
    OffloadDevice d = OffloadDevice::None;
    if (dev == "cpu")
      d = OffloadDevice::Cpu;
    else if (dev == "nvme")
      d = OffloadDevice::Nvme;
    else if (dev != "none")
      o.at("device").fail(fmt::format("'{}' is not one of none, cpu, nvme", dev));
    // Tuning of the NVMe swapper and of initialisation: no effect on the modelled step's time.
    if (o.has("buffer_count")) o.at("buffer_count").get_int_at_least(1);
    if (o.has("buffer_size")) o.at("buffer_size").get_int_at_least(1);
    if (o.has("max_in_cpu")) o.at("max_in_cpu").get_int_at_least(0);
    if (o.has("fast_init")) o.at("fast_init").get_bool();
    const bool pinned = o.bool_or("pin_memory", false);  // DeepSpeed's default: false
    if (o.has("nvme_path")) {
      auto p = o.at("nvme_path");
      if (!p.value().is_null() && p.get_string().empty()) p.fail("must be a path (or null)");
    }
    // ZeRO-Infinity's pipelined swapping (overlapping NVMe reads/writes with CPU Adam) is not
    // modelled: the step swaps, updates, then swaps back.
    for (const char* k : {"pipeline_read", "pipeline_write"})
      if (o.has(k) && o.at(k).get_bool())
        o.at(k).fail(
            "true (NVMe swaps overlapped with the CPU optimizer) is not modelled; use false");
    if (o.has("ratio")) {
      auto r = o.at("ratio");
      const double v = r.get_number();
      if (v < 0 || v > 1) r.fail("must be in [0, 1]");
      if (v != 1 && d != OffloadDevice::None)
        r.fail(
            fmt::format("{} (ZeRO-Offload++ partial offload: part of the optimizer on the GPU) "
                        "is not modelled; use 1",
                        v));
    }
    if (d == OffloadDevice::None) continue;
    if (d == OffloadDevice::Nvme && (!o.has("nvme_path") || o.at("nvme_path").value().is_null()))
      o.at("device").fail("\"nvme\" needs nvme_path (DeepSpeed requires it)");
    if (param && z.at("stage").get_int() != 3)
      o.at("device").fail(
          fmt::format("'{}': offload_param needs stage 3 (DeepSpeed offloads "
                      "parameters only where they are partitioned)",
                      dev));
    (param ? s.offload_param : s.offload_optimizer) = d;
    s.offload_pageable = s.offload_pageable || !pinned;
  }
}

// The "zero_optimization" section, its keys checked against DeepSpeedZeroConfig's (v0.19.5
// config.py, fields and aliases): those read below and those without effect on the modelled step
// (deepspeed_keys_without_effect).
JsonReader zero_section(const JsonReader& r) {
  if (!r.has("zero_optimization"))
    r.fail("missing required key 'zero_optimization' (ZeRO stage 3)");
  auto z = r.at("zero_optimization");
  z.require_object(zero_keys());
  return z;
}

// The stage and what partitions the model: ZeRO++'s components and MiCS, each of which needs stage
// 3.
void read_partitioning(const JsonReader& z, Strategy& s) {
  const auto stage = z.at("stage").get_int();
  s.qwz = z.bool_or("zero_quantized_weights", false);
  s.qgz = z.bool_or("zero_quantized_gradients", false);
  const auto hpz =
      z.has("zero_hpz_partition_size") ? z.at("zero_hpz_partition_size").get_int32_at_least(1) : 1;
  s.hpz = hpz > 1;
  s.hpz_size = s.hpz ? static_cast<int>(hpz) : 0;
  // MiCS (hybrid sharding): stage 3 within groups of mics_shard_size ranks; -1 is DeepSpeed's
  // "off".
  const auto mics = z.has("mics_shard_size") ? z.at("mics_shard_size").get_int() : std::int64_t{-1};
  if (stage != 3) {
    const char* zpp = s.qwz        ? "zero_quantized_weights"
                      : s.qgz      ? "zero_quantized_gradients"
                      : s.hpz      ? "zero_hpz_partition_size"
                      : mics != -1 ? "mics_shard_size"
                                   : nullptr;
    if (zpp)
      z.at("stage").fail(fmt::format("is {}, but {} ({}) needs stage 3", stage, zpp,
                                     zpp[0] == 'm' ? "MiCS" : "ZeRO++"));
    if (stage != 1 && stage != 2)
      z.at("stage").fail(fmt::format("is {}; ZeRO stages 1, 2 and 3 are modelled", stage));
    s.stage = static_cast<int>(stage);
  }
  if (mics != -1) {
    auto m = z.at("mics_shard_size");
    if (mics < 1) m.fail("must be -1 (off) or at least 1");
    if (s.qwz || s.hpz || s.qgz) m.fail("MiCS together with ZeRO++ components is not modelled");
    s.hsdp = true;
    s.shard_size = m.get_int32_at_least(1);
  }
  if (z.has("mics_hierarchical_params_gather") &&
      z.at("mics_hierarchical_params_gather").get_bool())
    z.at("mics_hierarchical_params_gather").fail("true is not modelled; use false");
}

// The offload sections, refused together with MiCS or hpZ (combinations not modelled).
void read_offload_checked(const JsonReader& z, Strategy& s) {
  read_offload(z, s);
  if (s.offloads() && s.hsdp)
    z.at(s.offload_param != OffloadDevice::None ? "offload_param" : "offload_optimizer")
        .at("device")
        .fail("offloading together with MiCS (mics_shard_size) is not modelled");
  if (s.offload_param != OffloadDevice::None && s.hpz)
    z.at("offload_param")
        .at("device")
        .fail(
            "offloading parameters together with hpZ (zero_hpz_partition_size: a secondary "
            "partition "
            "on the GPU) is not modelled");
}

// Gradient reduction and parameter prefetch: buckets, overlap and the keys read but not modelled.
void read_buckets(const JsonReader& z, Strategy& s) {
  if (z.has("reduce_scatter") && !z.at("reduce_scatter").get_bool())
    z.at("reduce_scatter").fail("false (all-reduce of gradients) is not modelled; use true");
  s.overlap_comm = z.bool_or("overlap_comm", true);
  // Stage 3's copy into the bucket's buffer is modelled (lower_deepspeed.cpp ipg_copies); stages 1
  // and 2 (stage_1_and_2.py, not among shared/reference's files) price no gradient copy either
  // way, said in the result's warnings.
  if (z.has("contiguous_gradients")) {
    s.contiguous_gradients = z.at("contiguous_gradients").get_bool();
    if (s.stage < 3) s.keys_without_effect.push_back("zero_optimization.contiguous_gradients");
  }
  if (z.has("reduce_bucket_size"))
    s.reduce_bucket_elems = count_or_auto(z.at("reduce_bucket_size"), 1);
  if (const char* k = alias_key(z, "stage3_prefetch_bucket_size", "prefetch_bucket_size"); z.has(k))
    s.prefetch_bucket_elems = count_or_auto(z.at(k), 0);
  // 0 is accepted, as DeepSpeed does: nothing may be prefetched.
  if (const char* k = alias_key(z, "stage3_max_live_parameters", "max_live_parameters"); z.has(k))
    s.max_live_params = z.at(k).get_int_at_least(0);
  if (const char* k = alias_key(z, "stage3_max_reuse_distance", "max_reuse_distance"); z.has(k))
    s.max_reuse_distance = z.at(k).get_int_at_least(0);
  // Read, not modelled (said in the result's warnings); saving a checkpoint is not part of a step.
  if (z.has(alias_key(z, "stage3_param_persistence_threshold", "param_persistence_threshold")))
    s.unmodelled_keys |= Strategy::kUnmodelledPersistence;
  for (const auto& [prefixed, plain] : kStage3Aliases) alias_key(z, prefixed, plain);
  // The optimizer step's sub-groups (stage3.py, _create_fp16_sub_groups): the FP32 copy of one
  // sub-group's gradients is what the step holds besides the model states (memory model).
  if (z.has("sub_group_size")) s.sub_group_elems = z.at("sub_group_size").get_int_at_least(0);
  // Fetching by all-reduce and one all-gather per parameter change the gathers: not modelled.
  for (const auto& [prefixed, plain] :
       {std::pair{"stage3_use_all_reduce_for_fetch_params", "use_all_reduce_for_fetch_params"},
        std::pair{"stage3_allgather_sequential", "allgather_sequential"}})
    if (const char* k = alias_key(z, prefixed, plain); z.has(k) && z.at(k).get_bool())
      z.at(k).fail(
          "true is not modelled (weights are gathered with all_gather_coalesced); use false");
  if (z.has("allgather_partitions") && !z.at("allgather_partitions").get_bool())
    z.at("allgather_partitions")
        .fail("false (stages 1 and 2 broadcast the updated partitions) is not modelled; use true");
  if (z.has("zenflow") && !z.at("zenflow").value().is_null())
    z.at("zenflow").fail("ZenFlow (stale-gradient CPU offloading) is not modelled");
}

// The batch: "auto" (Hugging Face fills it from its arguments) leaves the command line's value.
void read_batch(const JsonReader& r, Strategy& s) {
  if (r.has("train_micro_batch_size_per_gpu") && !is_auto(r.at("train_micro_batch_size_per_gpu")))
    s.micro_batch_sequences = r.at("train_micro_batch_size_per_gpu").get_int32_at_least(1);
  if (r.has("gradient_accumulation_steps") && !is_auto(r.at("gradient_accumulation_steps")))
    s.grad_accum = r.at("gradient_accumulation_steps").get_int32_at_least(1);
  if (r.has("train_batch_size") && !is_auto(r.at("train_batch_size")))
    s.train_batch_size = r.at("train_batch_size").get_int_at_least(1);
}

// The training data type (fp16 or bf16 section) and the gradients' communication type.
void read_dtypes(const JsonReader& r, Strategy& s) {
  // "bfloat16" is DeepSpeed's older spelling of "bf16" (runtime/config.py, get_bfloat16_config
  // reads either).
  if (r.has("bf16") && r.has("bfloat16"))
    r.at("bfloat16").fail("given twice: as 'bfloat16' (the older spelling) and as 'bf16'");
  const int fp16 = enabled_section(r, "fp16"),
            bf16 = enabled_section(r, r.has("bfloat16") ? "bfloat16" : "bf16");
  if (fp16 == 1 && bf16 == 1)
    r.at(r.has("bfloat16") ? "bfloat16" : "bf16").fail("fp16 and bf16 cannot both be enabled");
  if (fp16 == 1 || bf16 == 1)
    s.dtype = bf16 == 1 ? "bf16" : "fp16";
  else if (fp16 == -1 || bf16 == -1) {
    s.dtype = "auto";  // resolve_auto picks among the sections left "auto"
    s.auto_dtypes = (fp16 == -1 ? 1 : 0) | (bf16 == -1 ? 2 : 0);
  } else
    r.fail("enable fp16 or bf16 (FP32 training is not modelled)");
  if (r.has("communication_data_type")) {
    auto c = r.at("communication_data_type");
    const std::string t = c.get_string();
    if (t == "fp32")
      s.grad_comm_bytes = 4;
    else if (t == "fp16" || t == "bf16")
      s.grad_comm_bytes = 2;
    else
      c.fail(fmt::format("'{}' is not one of fp16, bf16, fp32", t));
  }
}

// The keys of `r` (at `path`) listed without effect, for the result's warnings.
void note_without_effect(const JsonReader& r, const char* path,
                         const std::vector<DeepSpeedKey>& table, Strategy& s) {
  for (const DeepSpeedKey& k : table)
    if (r.has(k.key)) s.keys_without_effect.push_back(std::string(path) + k.key);
}

// Every unknown key of the file at once: the top level's (`top`), zero_optimization's and its
// offload blocks', each with its closest known key, in one error that names the first (a file with
// typos in several objects is fixed in one run). The objects' other rules are checked as they are
// read.
void require_known_keys(const JsonReader& r, const std::vector<std::string_view>& top) {
  std::optional<InputError> first;
  std::string elsewhere;
  const auto check = [&](const JsonReader& o, const std::vector<std::string_view>& known) {
    if (!o.value().is_object()) return;
    try {
      o.require_object(known);
    } catch (const InputError& e) {
      if (!first)
        first = e;
      else
        elsewhere += fmt::format("; {}: {}", e.path(), e.rule().substr(0, e.rule().find(kAllowed)));
    }
  };
  check(r, top);
  if (r.has("zero_optimization")) {
    const JsonReader z = r.at("zero_optimization");
    check(z, zero_keys());
    for (const bool param : {false, true}) {
      const char* block = param ? "offload_param" : "offload_optimizer";
      if (z.value().is_object() && z.has(block)) check(z.at(block), offload_keys(param));
    }
  }
  if (!first) return;
  if (elsewhere.empty()) throw *first;
  const std::string& rule = first->rule();
  const std::size_t allowed = std::min(rule.find(kAllowed), rule.size());
  throw InputError(first->file(), first->path(),
                   rule.substr(0, allowed) + elsewhere + rule.substr(allowed));
}

}  // namespace

const std::vector<DeepSpeedKey>& deepspeed_top_keys_without_effect() {
  static const std::vector<DeepSpeedKey> keys = {
      {"optimizer",
       "its type and hyper-parameters: every optimizer is priced as mixed-precision "
       "Adam (12 bytes of FP32 state per parameter)"},
      {"scheduler", "a learning-rate schedule"},
      {"gradient_clipping", "a scale of the gradients (their norm is computed either way)"},
      {"prescale_gradients", "a scale of the gradients"},
      {"gradient_predivide_factor", "a scale of the gradients"},
      {"sparse_gradients", "embedding gradients as sparse tensors (not used by ZeRO-3)"},
      {"zero_allow_untested_optimizer", "a safety check"},
      {"zero_force_ds_cpu_optimizer", "a safety check of offloaded optimizers"},
      {"steps_per_print", "logging"},
      {"wall_clock_breakdown", "timers"},
      {"dump_state", "logging"},
      {"memory_breakdown", "logging"},
      {"timers", "timers"},
      {"flops_profiler", "profiling"},
      {"tensorboard", "monitoring"},
      {"wandb", "monitoring"},
      {"csv_monitor", "monitoring"},
      {"comet", "monitoring"},
      {"comms_logger", "logging"},
      {"activation_checkpointing",
       "DeepSpeed's checkpointing API settings; checkpointing itself is "
       "--activation-checkpointing"},
      {"aio", "the NVMe library's tuning; NVMe is priced at the drives' rate"},
      {"checkpoint", "saving and loading checkpoints"},
      {"data_types", "grad_accum_dtype, used by the BF16 optimizer of stages 0 and 1 only"},
      {"elasticity", "elastic batch sizing"},
      {"autotuning", "DeepSpeed's autotuner"},
      {"dataloader_drop_last", "data loading"},
      {"data_efficiency", "data sampling and routing"},
      {"curriculum_learning", "data sampling"},
      {"compile", "torch.compile of the model"},
      {"seed", "random seed"},
  };
  return keys;
}

const std::vector<DeepSpeedKey>& deepspeed_zero_keys_without_effect() {
  static const std::vector<DeepSpeedKey> keys = {
      {"round_robin_gradients", "the order of gradient copies"},
      {"use_multi_rank_bucket_allreduce", "stages 1 and 2 with expert parallelism"},
      {"load_from_fp32_weights", "checkpoint loading"},
      {"elastic_checkpoint", "checkpoint format"},
      {"ignore_unused_parameters", "a check for unused parameters"},
      {"legacy_stage1", "stage 1's older implementation, the same communication"},
      {"zero_quantized_nontrainable_weights", "frozen weights only; every weight trains here"},
      {"zeropp_loco_param",
       "LoCo's error feedback for qgZ: not modelled (its FP32 error buffers and kernels are not "
       "priced); qgZ runs as without it"},
      {"memory_efficient_linear", "which autograd function the linear layers use"},
      {"pipeline_loading_checkpoint", "checkpoint loading"},
      {"override_module_apply", "module initialisation"},
      {"log_trace_cache_warnings", "logging"},
      {"enable_sanity_checks", "debug checks"},
      {"save_muon_momentum_buffer_in_memory", "the Muon optimizer only"},
      {"leaf_module", "which modules are fetched as leaves: every transformer submodule is"},
      {"stage3_gather_16bit_weights_on_model_save", "saving the model"},
      {"gather_16bit_weights_on_model_save", "saving the model"},
      {"stage3_gather_fp16_weights_on_model_save", "saving the model"},
      {"stage3_model_persistence_threshold",
       "a cap on persistent parameters; the persistence threshold is not modelled either"},
      {"model_persistence_threshold",
       "a cap on persistent parameters; the persistence threshold is not modelled either"},
      {"stage3_module_granularity_threshold",
       "not modelled: modules below it would be fetched with their parents"},
      {"module_granularity_threshold",
       "not modelled: modules below it would be fetched with their parents"},
  };
  return keys;
}

Strategy parse_deepspeed(const json& j, const std::string& file) {
  JsonReader r(j, file);
  // Top-level keys DeepSpeed knows (runtime/config.py): those read below and those without
  // effect on the modelled step.
  std::vector<std::string_view> known = {"train_batch_size",
                                         "train_micro_batch_size_per_gpu",
                                         "gradient_accumulation_steps",
                                         "zero_optimization",
                                         "fp16",
                                         "bf16",
                                         "bfloat16",
                                         "communication_data_type"};
  for (const DeepSpeedKey& k : deepspeed_top_keys_without_effect()) known.push_back(k.key);
  require_known_keys(r, known);
  Strategy s;
  s.source = file;
  const JsonReader z = zero_section(r);
  read_partitioning(z, s);
  if (z.has("allgather_bucket_size"))
    s.allgather_bucket_elems = z.at("allgather_bucket_size").get_int_at_least(1);
  read_offload_checked(z, s);
  read_buckets(z, s);
  read_batch(r, s);
  read_dtypes(r, s);
  note_without_effect(r, "", deepspeed_top_keys_without_effect(), s);
  note_without_effect(z, "zero_optimization.", deepspeed_zero_keys_without_effect(), s);
  return s;
}

std::vector<std::string> resolve_auto(Strategy& s, std::int64_t hidden, bool gpu_has_bf16) {
  std::vector<std::string> filled;
  if (s.reduce_bucket_elems == Strategy::kAuto) {
    s.reduce_bucket_elems = hidden * hidden;
    filled.push_back(
        fmt::format("reduce_bucket_size \"auto\" = hidden^2 = {}", s.reduce_bucket_elems));
  }
  if (s.prefetch_bucket_elems == Strategy::kAuto) {
    s.prefetch_bucket_elems = static_cast<std::int64_t>(0.9 * static_cast<double>(hidden * hidden));
    filled.push_back(fmt::format("stage3_prefetch_bucket_size \"auto\" = 0.9 hidden^2 = {}",
                                 s.prefetch_bucket_elems));
  }
  if (s.dtype == "auto") {
    // BF16 where the GPU has it and the config allows it, else FP16 when allowed.
    const bool bf16 = (s.auto_dtypes & 2) && (gpu_has_bf16 || !(s.auto_dtypes & 1));
    s.dtype = bf16 ? "bf16" : "fp16";
    const char* why = s.auto_dtypes != 3 ? "the one section left \"auto\""
                      : gpu_has_bf16     ? "the GPU has BF16"
                                         : "the GPU has no BF16";
    filled.push_back(fmt::format("fp16/bf16 \"auto\": {} ({})", s.dtype, why));
  }
  return filled;
}

Strategy load_deepspeed(const std::string& path) {
  return parse_deepspeed(load_json_file(path), path);
}

}  // namespace zerosim
