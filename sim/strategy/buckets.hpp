// Gradient buckets as DeepSpeed stage 3 forms them: gradients arrive tensor by tensor in backward
// order; a tensor that would overflow the bucket (reduce_bucket_size elements) first flushes it,
// and a tensor larger than the bucket is reduced alone. A bucket is reduced when the module holding
// its last tensor finishes its backward. Under qgZ each bucket splits into the part that qualifies
// (2-D tensors whose size divides by 2 x world) and the FP16 reduce-scatter fallback (1-D tensors,
// the rest).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/strategy/strategy.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

struct GradBucket {
  int ready_module = -1;       // index into the forward-order module list
  std::int64_t quantized = 0;  // elements reduced by qgZ (0 without qgZ)
  std::int64_t fallback = 0;   // elements reduced by the FP16 reduce-scatter
  std::int64_t elems() const { return quantized + fallback; }
};

// qgz_active: qgZ is on and the world spans more than one node.
std::vector<GradBucket> make_grad_buckets(const std::vector<Module>& modules,
                                          std::int64_t bucket_elems, bool qgz_active, int world);

}  // namespace zerosim
