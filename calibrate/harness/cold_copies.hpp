// Cold timing in zerosim-calibrate: a burst of launches cycles through K disjoint copies of one
// launch's working set, so that between two launches on the same copy the K - 1 others, together
// at least twice the L2 capacity, pass through the cache and every launch reads from HBM, as a
// training step's kernels do (a shard last touched by the optimizer, a bucket written a layer
// before). Arithmetic only, so it is tested without a GPU.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

namespace zerosim::harness {

// K for a working set of `bytes` (read + written by one launch) on a device with `l2_bytes` of L2,
// when at most `room` copies fit in the buffers: ceil(2 x L2 / bytes) + 1, within [1, room].
inline std::size_t cold_copies(double bytes, std::size_t l2_bytes, std::size_t room) {
  const double need = std::ceil(2.0 * static_cast<double>(l2_bytes) / bytes) + 1.0;
  return std::clamp<std::size_t>(static_cast<std::size_t>(need), 1, std::max<std::size_t>(room, 1));
}

}  // namespace zerosim::harness
