// The ds_config block that turns a DeepSpeed strategy on: zero_optimization's stage, ZeRO++'s
// switches (zero_quantized_weights, zero_hpz_partition_size, zero_quantized_gradients, the keys
// of DeepSpeed's DeepSpeedZeroConfig, deepspeed/runtime/zero/config.py) or MiCS's
// mics_shard_size, with the communication overlap DeepSpeed's examples set. One home: `plan
// --emit-deepspeed` writes it and `report` prints it next to each recommendation. Keys in
// DeepSpeedZeroConfig's field order (deepspeed/runtime/zero/config.py, the order its documentation
// lists them).
#pragma once
#include "sim/core/json_io.hpp"
#include "sim/strategy/strategy.hpp"

namespace zerosim {

// The zero_optimization object of a DeepSpeed strategy on nodes of `gpus_per_node` GPUs (hpZ's
// and MiCS's group default to one node); null for PyTorch FSDP, which has no ds_config.
ordered_json zero_optimization_block(const Strategy& strategy, int gpus_per_node);

}  // namespace zerosim
