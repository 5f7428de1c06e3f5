// SuffixTable (topology_graph.hpp): the route walks' memo of route suffixes per (fabric vertex,
// dst, key left). Flat slots hold the first key seen per (vertex, dst); on the builders' fabrics
// that is the only one (the key is consumed at the source leaf's spine choice, before or at the
// first fabric vertex), so the hash map takes only explicit graphs' rare second keys.
#include <algorithm>

#include "sim/topology/topology_graph.hpp"

namespace zerosim {

void SuffixTable::configure(int fabric_vertices, int gpus) {
  gpus_ = static_cast<std::size_t>(gpus);
  const std::size_t slots = static_cast<std::size_t>(fabric_vertices) * gpus_;
  flat_.clear();
  // Small clusters route few pairs: zeroing a table per cluster would cost more than hashing.
  if (gpus_ >= kMinFlatGpus && slots <= kMaxFlatSlots)
    flat_.resize(slots);  // value-initialised: count -1, empty
}

RouteSuffix* SuffixTable::flat_slot(const SuffixKey& k, int fabric_index) {
  if (flat_.empty()) return nullptr;
  return &flat_[static_cast<std::size_t>(fabric_index) * gpus_ + static_cast<std::size_t>(k.dst)];
}

const RouteSuffix* SuffixTable::find(const SuffixKey& k, int fabric_index) const {
  if (!flat_.empty()) {
    const RouteSuffix& s =
        flat_[static_cast<std::size_t>(fabric_index) * gpus_ + static_cast<std::size_t>(k.dst)];
    if (s.count >= 0 && s.key == k.key) return &s;
  }
  if (hashed_.empty()) return nullptr;
  auto it = hashed_.find(k);
  return it == hashed_.end() ? nullptr : &it->second;
}

void SuffixTable::insert(const SuffixKey& k, int fabric_index, std::span<const LinkId> links,
                         int min_node, int max_node) {
  if (pool_.size() + links.size() > kMaxPoolLinks) {  // bound memory: start over
    pool_.clear();
    hashed_.clear();
    std::fill(flat_.begin(), flat_.end(), RouteSuffix{});
  }
  RouteSuffix s;
  s.begin = static_cast<std::int64_t>(pool_.size());
  s.count = static_cast<std::int32_t>(links.size());
  s.min_node = min_node;
  s.max_node = max_node;
  s.key = k.key;
  pool_.insert(pool_.end(), links.begin(), links.end());
  RouteSuffix* slot = flat_slot(k, fabric_index);
  if (slot && (slot->count < 0 || slot->key == k.key))
    *slot = s;
  else
    hashed_.emplace(k, s);
}

}  // namespace zerosim
