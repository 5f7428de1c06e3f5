// Gradient buckets as DeepSpeed stage 3 forms them: gradients arrive tensor by tensor in backward
// order; a tensor that would overflow the bucket (reduce_bucket_size elements) first flushes it,
// and a tensor larger than the bucket is reduced alone. A bucket is reduced when the module holding
// its last tensor finishes its backward. Under qgZ each bucket splits into the part that qualifies
// and the FP16 reduce-scatter fallback, as all_to_all_quant_reduce (coalesced_collectives.py)
// decides per tensor: 1-D tensors fall back, and with `divisibility_fallback` (DeepSpeed 0.13.2
// on, qgz_divisibility_fallback) so does every tensor whose size does not divide by 2 x world.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/strategy/strategy.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

// A gradient tensor of a bucket, and whether qgZ's all-to-all reduces it (else the reduce-scatter).
struct BucketTensor {
  std::int64_t elems = 0;
  bool quantized = false;
  std::int64_t max_dim = 0;  // ParamTensor::max_dim: qgZ's quantization groups follow it
};

struct GradBucket {
  int ready_module = -1;       // index into the forward-order module list
  std::int64_t quantized = 0;  // elements reduced by qgZ (0 without qgZ)
  std::int64_t fallback = 0;   // elements reduced by the FP16 reduce-scatter
  // Its tensors in the order stage3.py's __reduce_and_partition_ipg_grads hands them over (sorted
  // by ds_id: forward order); all_to_all_quant_reduce reduces them one at a time.
  std::vector<BucketTensor> tensors;
  std::int64_t elems() const { return quantized + fallback; }
};

// qgz_active: qgZ is on and the world spans more than one node.
std::vector<GradBucket> make_grad_buckets(const std::vector<Module>& modules,
                                          std::int64_t bucket_elems, bool qgz_active, int world,
                                          bool divisibility_fallback);

// The most bytes qgZ's all_to_all_quant_reduce (coalesced_collectives.py, the same in 0.10.0,
// 0.13.2 and 0.19.5) holds at once while reducing bucket b, besides the bucket's gradients. Per
// quantized tensor of n elements it allocates, in order: swizzle_quant's INT4 data and FP32 scales
// (n grad_bits / 8 + 4 G bytes, G = qgz_intra_groups), their all-to-all outputs (torch.empty_like:
// as much again), quantized_reduction's outputs (a GPUs-per-node-th of the data, 4 G2 bytes of
// scales, G2 = qgz_inter_groups), their all-to-all outputs (as much again) and the dequantized
// FP16 result (2 n / N bytes); each rebinds a loop variable, so the previous quantized tensor's
// buffer of the same name is freed only after the new one is allocated. Every tensor leaves its
// reduced FP16 shard (2 n / world bytes) in the output list.
double qgz_buffer_bytes(const GradBucket& b, int world, int gpus_per_node, int grad_bits);

}  // namespace zerosim
