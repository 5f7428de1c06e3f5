// ZeRO++'s quantization groups: how many FP32 scales DeepSpeed's quantizers write for a tensor,
// by the rules of its own code (the same in 0.10.0, 0.13.2 and 0.19.5).
#pragma once
#include <cstdint>
#include <unordered_map>

#include "sim/workload/transformer.hpp"

namespace zerosim {

// qwZ: partition_parameters.py CUDAQuantizer.quantize(param, groups=None), called by
// all_gather_coalesced's quantized branch on the rank's flat shard of `numel` elements (the cat of
// the fetched parameters' partitions). Starting from ceil(numel / 8000) (target_group_size), the
// smallest count g with numel % (8 g) == 0, then doubled while numel % (16 g) == 0 and
// numel / g > 8000 (never, from that start). One symmetric INT8 scale (FP32) per group. Where no
// such g exists (numel not a multiple of 8) DeepSpeed's assert stops the run; the model then
// prices the start, ceil(numel / 8000).
std::int64_t qwz_quant_groups(std::int64_t numel);
// qwz_quant_groups with its answers kept: a step's gathers quantize the same few shard sizes
// thousands of times, and one answer can cost a thousand divisions.
class QwzGroupCounter {
 public:
  std::int64_t operator()(std::int64_t numel);

 private:
  std::unordered_map<std::int64_t, std::int64_t> known_;  // numel -> groups
};
// qwZ's FP32 scales for a gather of module m over `ranks` ranks, its parameters partitioned over
// `shard_ranks`: all_gather_coalesced quantizes the rank's flat shard (the cat of the gathered
// parameters' partitions, each ceil(numel / shard_ranks) elements; of hpZ's secondary partitions,
// ds_secondary_tensor_num_of_groups = shard_ranks / ranks times that) in qwz_quant_groups groups
// and gathers one FP32 per group from every rank.
// `groups`: where the group counts are kept (null: computed each time).
double qwz_scale_bytes(const Module& m, int ranks, int shard_ranks,
                       QwzGroupCounter* groups = nullptr);

// qgZ: coalesced_collectives.py all_to_all_quant_reduce, per 2-D gradient tensor:
// intra_quant_group = max(shape[0], shape[1], world size) groups for swizzle_quant (one FP32 scale
// each) and inter_quant_group = intra_quant_group // GPUs per node for the requantize after the
// intra-node reduction (quantized_reduction).
std::int64_t qgz_intra_groups(std::int64_t max_dim, int world);
std::int64_t qgz_inter_groups(std::int64_t max_dim, int world, int gpus_per_node);

}  // namespace zerosim
