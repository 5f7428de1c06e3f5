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

}  // namespace zerosim
