#include "sim/strategy/strategy.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "sim/core/error.hpp"

namespace zerosim {

std::string Strategy::name() const {
  if (stage == 1) return "zero1";
  if (stage == 2) return "zero2";
  if (hsdp) return "hsdp";
  if (qwz && hpz && qgz) return "zeropp";
  std::string n = "zero3";
  if (qwz) n += "+qwz";
  if (hpz) n += "+hpz";
  if (qgz) n += "+qgz";
  return n;
}

Strategy parse_strategy(const std::string& text, const std::string& flag) {
  Strategy s;
  if (text == "zeropp" || text == "zero++") {
    s.qwz = s.hpz = s.qgz = true;
    return s;
  }
  if (text == "zero1" || text == "zero2") {
    s.stage = text == "zero1" ? 1 : 2;
    return s;
  }
  if (text == "hsdp") {
    s.hsdp = true;
    return s;
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto plus = text.find('+', start);
    parts.push_back(text.substr(start, plus == std::string::npos ? plus : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  if (parts[0] != "zero3")
    throw flag_error(flag, fmt::format("strategy '{}' must start with zero3 (or be zeropp, zero1, "
                                       "zero2 or hsdp); e.g. zero3, zeropp, zero3+qwz+hpz",
                                       text));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    bool* bit = parts[i] == "qwz"   ? &s.qwz
                : parts[i] == "hpz" ? &s.hpz
                : parts[i] == "qgz" ? &s.qgz
                                    : nullptr;
    if (!bit)
      throw flag_error(flag,
                       fmt::format("unknown strategy component '{}' in '{}' (known: qwz, hpz, qgz)",
                                   parts[i], text));
    if (*bit)
      throw flag_error(flag,
                       fmt::format("strategy component '{}' given twice in '{}'", parts[i], text));
    *bit = true;
  }
  return s;
}

namespace {

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

// offload_optimizer and offload_param (DeepSpeed's DeepSpeedZeroOffloadOptimizerConfig and
// DeepSpeedZeroOffloadParamConfig, their keys only). Every key is read: those that change the
// modelled step set it, the others are checked for their type; settings that would change it in
// ways not modelled are refused naming the key.
void read_offload(const JsonReader& z, Strategy& s) {
  for (const bool param : {false, true}) {
    const char* block = param ? "offload_param" : "offload_optimizer";
    if (!z.has(block)) continue;
    auto o = z.at(block);
    if (!o.value().is_object()) o.fail("must be an object");
    if (param)
      o.require_object(
          {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"});
    else
      o.require_object({"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read",
                        "pipeline_write", "fast_init", "ratio"});
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

// The "zero_optimization" section, its keys checked: those DeepSpeed knows (read below or ignored
// as not changing the modelled step).
JsonReader zero_section(const JsonReader& r) {
  if (!r.has("zero_optimization"))
    r.fail("missing required key 'zero_optimization' (ZeRO stage 3)");
  auto z = r.at("zero_optimization");
  z.require_object(
      {"stage", "zero_quantized_weights", "zero_hpz_partition_size", "zero_quantized_gradients",
       "overlap_comm", "reduce_scatter", "reduce_bucket_size", "stage3_prefetch_bucket_size",
       "stage3_max_live_parameters", "stage3_max_reuse_distance",
       "stage3_param_persistence_threshold", "contiguous_gradients", "sub_group_size",
       "allgather_partitions", "allgather_bucket_size", "round_robin_gradients",
       "stage3_gather_16bit_weights_on_model_save", "zero_quantized_nontrainable_weights",
       // the same settings under DeepSpeed's field names (without "stage3_")
       "prefetch_bucket_size", "max_live_parameters", "max_reuse_distance",
       "param_persistence_threshold", "gather_16bit_weights_on_model_save",
       "stage3_gather_fp16_weights_on_model_save", "offload_optimizer", "offload_param",
       "mics_shard_size", "mics_hierarchical_params_gather"});
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
  alias_key(z, "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save");
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
  const int fp16 = enabled_section(r, "fp16"), bf16 = enabled_section(r, "bf16");
  if (fp16 == 1 && bf16 == 1) r.at("bf16").fail("fp16 and bf16 cannot both be enabled");
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

}  // namespace

const char* to_string(OffloadDevice d) {
  switch (d) {
    case OffloadDevice::Cpu:
      return "cpu";
    case OffloadDevice::Nvme:
      return "nvme";
    case OffloadDevice::None:
      break;
  }
  return "none";
}

Strategy parse_deepspeed(const json& j, const std::string& file) {
  JsonReader r(j, file);
  // Top-level keys DeepSpeed knows; those not listed as read below do not change the modelled step.
  r.require_object({"train_batch_size",
                    "train_micro_batch_size_per_gpu",
                    "gradient_accumulation_steps",
                    "zero_optimization",
                    "fp16",
                    "bf16",
                    "optimizer",
                    "scheduler",
                    "gradient_clipping",
                    "steps_per_print",
                    "wall_clock_breakdown",
                    "zero_allow_untested_optimizer",
                    "prescale_gradients",
                    "gradient_predivide_factor",
                    "communication_data_type",
                    "activation_checkpointing",
                    "flops_profiler",
                    "tensorboard",
                    "wandb",
                    "csv_monitor",
                    "comms_logger",
                    "dump_state",
                    "memory_breakdown",
                    "seed",
                    "zero_force_ds_cpu_optimizer"});
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

json to_json(const Strategy& s) {
  json j = json::object();
  j.emplace("name", s.name());
  if (s.hsdp) j.emplace("shard_size", s.shard_size);
  j.emplace("qwz", s.qwz);
  j.emplace("hpz", s.hpz);
  j.emplace("qgz", s.qgz);
  j.emplace("hpz_size", s.hpz_size);
  j.emplace("weight_bits", s.weight_bits);
  j.emplace("grad_bits", s.grad_bits);
  j.emplace("quant_block_elems", s.quant_block);
  j.emplace("qgz_chunks", s.qgz_chunks);
  j.emplace("overlap_comm", s.overlap_comm);
  j.emplace("reduce_bucket_elems", s.reduce_bucket_elems);
  j.emplace("prefetch_bucket_elems", s.prefetch_bucket_elems);
  j.emplace("max_live_params", s.max_live_params);
  j.emplace("max_reuse_distance", s.max_reuse_distance);
  j.emplace("grad_comm_bytes", s.grad_comm_bytes);
  j.emplace("deepspeed_version", to_string(s.deepspeed_version));
  // The release's rules that ran, for the techniques that are on.
  json rules = json::object();
  if (s.hpz) rules.emplace("hpz_secondary_reads", to_string(hpz_rule(s.deepspeed_version)));
  if (s.qgz)
    rules.emplace("qgz_fallback", qgz_divisibility_fallback(s.deepspeed_version)
                                      ? "1-d and not divisible by 2 x world"
                                      : "1-d");
  j.emplace("deepspeed_rules", std::move(rules));
  j.emplace("dtype", s.dtype);
  j.emplace("source", s.source);
  // Only when offloading: results without it keep their bytes.
  if (s.offload_optimizer != OffloadDevice::None)
    j.emplace("offload_optimizer", to_string(s.offload_optimizer));
  if (s.offload_param != OffloadDevice::None)
    j.emplace("offload_param", to_string(s.offload_param));
  return j;
}

}  // namespace zerosim
