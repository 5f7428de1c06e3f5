// DeepSpeed config: a ds_config.json read into a Strategy, strictly. Every key DeepSpeed documents
// (runtime/config.py's top level, DeepSpeedZeroConfig's zero_optimization fields and aliases) is
// either read into the step model, listed here as having no effect on step time or memory (said
// in the result's warnings, with why), or refused with the reason when its setting would change
// the step in a way that is not modelled. Unknown keys are refused all at once, each with the
// closest known key.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/strategy/strategy.hpp"

namespace zerosim {

// A DeepSpeed key accepted without effect on the modelled step, and why it has none.
struct DeepSpeedKey {
  const char* key;
  const char* why;
};
const std::vector<DeepSpeedKey>& deepspeed_top_keys_without_effect();
const std::vector<DeepSpeedKey>& deepspeed_zero_keys_without_effect();

// A DeepSpeed JSON config (the whole file).
Strategy parse_deepspeed(const json& j, const std::string& file);
Strategy load_deepspeed(const std::string& path);
// Fills what a config left "auto" as Hugging Face's Trainer does (reduce_bucket_size = hidden^2,
// stage3_prefetch_bucket_size = 0.9 hidden^2) and an "auto" dtype by the GPU (bf16 from Ampere on,
// fp16 on Volta). Returns a sentence per value filled, for the result's warnings.
std::vector<std::string> resolve_auto(Strategy& s, std::int64_t hidden, bool gpu_has_bf16);

}  // namespace zerosim
