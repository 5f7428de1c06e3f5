#include "sim/result/deepspeed_block.hpp"

namespace zerosim {

json zero_optimization_block(const Strategy& s, int gpus_per_node) {
  if (s.family() != StrategyFamily::DeepSpeed) return nullptr;
  json zero = {{"stage", s.stage},
               {"overlap_comm", true},
               {"reduce_scatter", true},
               {"contiguous_gradients", true}};
  if (s.hsdp) {
    zero["mics_shard_size"] = s.shard_size > 0 ? s.shard_size : gpus_per_node;
  } else if (s.stage == 3) {
    zero["zero_quantized_weights"] = s.qwz;
    zero["zero_hpz_partition_size"] = s.hpz ? (s.hpz_size > 0 ? s.hpz_size : gpus_per_node) : 1;
    zero["zero_quantized_gradients"] = s.qgz;
  }
  return zero;
}

}  // namespace zerosim
