// qgZ's buffers while all_to_all_quant_reduce reduces a bucket, tensor by tensor, against the
// allocation order of coalesced_collectives.py in closed form.
#include <doctest/doctest.h>

#include "sim/strategy/buckets.hpp"

using namespace zerosim;

TEST_CASE("qgZ's buffers: one tensor's five allocations, the previous tensor's still bound") {
  // World 32, 8 GPUs per node, INT4. Tensor 1: 1024 elements, max dim 64 (64 groups, 8 after the
  // intra-node reduction); tensor 2: 2048 elements, max dim 16 (max(16, 32) = 32 groups, 4).
  constexpr int W = 32, N = 8, bits = 4;
  GradBucket b;
  b.tensors = {BucketTensor{1024, true, 64}, BucketTensor{2048, true, 16}};
  // Per tensor: swizzle_quant's data and scales, their all-to-all outputs, quantized_reduction's
  // data and scales, their all-to-all outputs, the FP16 dequantized result.
  const double t1[] = {512 + 4 * 64, 512 + 4 * 64, 64 + 4 * 8, 64 + 4 * 8, 2 * 128};
  const double t2[] = {1024 + 4 * 32, 1024 + 4 * 32, 128 + 4 * 4, 128 + 4 * 4, 2 * 256};
  // Alone, tensor 1 peaks with all five held.
  GradBucket one;
  one.tensors = {b.tensors[0]};
  CHECK(qgz_buffer_bytes(one, W, N, bits) == t1[0] + t1[1] + t1[2] + t1[3] + t1[4]);
  // With tensor 2 after it, the peak is tensor 2's all-to-all output of the data: its first two
  // buffers, tensor 1's from the second on (local_output is rebound only after the allocation)
  // and tensor 1's reduced FP16 shard (2 x 1024 / 32).
  const double out1 = 2.0 * 1024 / W;
  CHECK(qgz_buffer_bytes(b, W, N, bits) == out1 + t2[0] + t2[1] + t1[1] + t1[2] + t1[3] + t1[4]);
  // A fallback tensor holds no qgZ buffer; only its reduced shard stays.
  GradBucket fb;
  fb.tensors = {BucketTensor{64000, false, 0}};
  CHECK(qgz_buffer_bytes(fb, W, N, bits) == 2.0 * 64000 / W);
}
