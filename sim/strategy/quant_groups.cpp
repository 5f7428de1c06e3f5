#include "sim/strategy/quant_groups.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace zerosim {

namespace {

// qwz_quant_groups's search, for numel > 0.
std::int64_t search_quant_groups(std::int64_t numel) {
  constexpr std::int64_t kTarget = 8000;  // CUDAQuantizer.target_group_size
  const std::int64_t start = (numel + kTarget - 1) / kTarget;
  if (numel % 8 != 0) return start;  // DeepSpeed's assert fails here
  // The smallest divisor g >= start of m = numel / 8 is m / c for the largest divisor c of m with
  // c <= m / start (<= 1000): at most a thousand steps, usually one.
  const std::int64_t m = numel / 8;
  std::int64_t g = m;
  for (std::int64_t c = m / start; c >= 1; --c)
    if (m % c == 0) {
      g = m / c;
      break;
    }
  while (numel % (16 * g) == 0 && numel > kTarget * g) g *= 2;
  return g;
}

}  // namespace

std::int64_t qwz_quant_groups(std::int64_t numel) {
  if (numel <= 0) return 0;
  // The search divides up to a thousand times, and a lowering asks for the same few sizes (one
  // per module shape and group) for every layer: the last answers are kept per thread.
  constexpr std::size_t kKept = 16;
  struct Kept {
    std::int64_t numel = 0, groups = 0;
  };
  thread_local std::array<Kept, kKept> kept{};
  thread_local std::size_t next = 0;
  for (const Kept& k : kept)
    if (k.numel == numel) return k.groups;
  const std::int64_t g = search_quant_groups(numel);
  kept[next] = Kept{numel, g};
  next = (next + 1) % kKept;
  return g;
}

double qwz_scale_bytes(const Module& m, int ranks, int shard_ranks) {
  const std::int64_t S = std::max(1, shard_ranks);
  auto part = [&](std::int64_t n) { return (n + S - 1) / S; };  // ds_tensor.ds_numel
  std::int64_t shard = 0, own = 0;
  for (const ParamTensor& p : m.params) {
    shard += part(p.elems);
    own += p.elems;
  }
  if (m.gather_elems > own) shard += part(m.gather_elems - own);  // a tied head's embedding
  shard *= S / std::max(1, ranks);
  return 4.0 * static_cast<double>(qwz_quant_groups(shard)) * ranks;
}

std::int64_t qgz_intra_groups(std::int64_t max_dim, int world) {
  return std::max<std::int64_t>(max_dim, world);
}

std::int64_t qgz_inter_groups(std::int64_t max_dim, int world, int gpus_per_node) {
  return qgz_intra_groups(max_dim, world) / gpus_per_node;
}

}  // namespace zerosim
