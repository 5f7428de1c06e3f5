#include "sim/result/deepspeed_block.hpp"

namespace zerosim {

ordered_json zero_optimization_block(const Strategy& s, int gpus_per_node) {
  if (s.family() != StrategyFamily::DeepSpeed) return nullptr;
  ordered_json zero = {{"stage", s.stage},
                       {"contiguous_gradients", s.contiguous_gradients},
                       {"reduce_scatter", true},
                       {"overlap_comm", true}};
  if (s.hsdp) {
    zero["mics_shard_size"] = s.shard_size > 0 ? s.shard_size : gpus_per_node;
  } else if (s.stage == 3) {
    zero["zero_hpz_partition_size"] = s.hpz ? (s.hpz_size > 0 ? s.hpz_size : gpus_per_node) : 1;
    zero["zero_quantized_weights"] = s.qwz;
    zero["zero_quantized_gradients"] = s.qgz;
  }
  return zero;
}

}  // namespace zerosim
