// FSDP config: the FSDP settings users already have, read strictly as --deepspeed reads a
// ds_config. Two formats, told apart by their keys: the `fsdp_config` block of an LLM Foundry /
// Composer training YAML (Composer's FSDPConfig keys, with the run's top-level `precision`) and a
// Hugging Face Accelerate config YAML (`distributed_type: FSDP`, `fsdp_config` with fsdp_-prefixed
// keys, top-level `mixed_precision`). Every key of the block is either read into the settings the
// command line also has (the strategy, the --fsdp-* knobs, activation checkpointing), accepted
// without effect on step time or memory (said in the result's warnings, with why), or refused
// with the reason when its value would change the step in a way that is not modelled. Unknown keys
// are refused all at once, each with the closest known key. The rest of an LLM Foundry YAML (model,
// data, optimizer, batch) is not read: --model, --tokens-per-gpu and --grad-accum give those.
#pragma once
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/strategy/strategy_name.hpp"

namespace zerosim {

// A setting the config makes: the scenario flag it stands for ("--fsdp-backward-prefetch"), the
// flag's value ("post") and the config's key that made it ("/fsdp_config/backward_prefetch").
struct FsdpConfigSetting {
  std::string flag, value, key;
};

struct FsdpConfig {
  std::string file;
  std::string format;  // "LLM Foundry / Composer" | "Hugging Face Accelerate"
  // In the order they are applied; "--strategy" first (the sharding strategy, FULL_SHARD when the
  // config names none, as both frameworks default).
  std::vector<FsdpConfigSetting> settings;
  // "<key>: <why it does not change the step>", for the result's warnings.
  std::vector<std::string> keys_without_effect;
  // Framework defaults the config relies on ("mixed_precision not given: Composer's DEFAULT ...").
  std::vector<std::string> defaults_taken;
};

// A YAML document already read (yaml_io.hpp), as JSON.
FsdpConfig parse_fsdp_config(const json& doc, const std::string& file);
FsdpConfig load_fsdp_config(const std::string& path);

}  // namespace zerosim
