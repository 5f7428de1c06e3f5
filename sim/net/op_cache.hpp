// OpCache: per-collective results keyed by what determines them (kind, algorithms, bytes, groups;
// not the label). A training step repeats the same few collectives every layer, so the network
// tiers lower and route each distinct op once. Ordered map: deterministic, no hashing of groups.
#pragma once
#include <compare>
#include <map>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace zerosim {

template <class V>
class OpCache {
 public:
  // nullptr if op was not inserted yet. Does not copy op's groups.
  const V* find(const CollectiveOp& op) const {
    for (auto it = map_.lower_bound(
             Key{op.kind, op.algorithm, op.nccl_algo, op.nccl_proto, op.bytes, {}});
         it != map_.end() && it->first.kind == op.kind && it->first.algorithm == op.algorithm &&
         it->first.nccl_algo == op.nccl_algo && it->first.nccl_proto == op.nccl_proto &&
         it->first.bytes == op.bytes;
         ++it)
      if (it->first.groups == op.groups) return &it->second;
    return nullptr;
  }
  const V& insert(const CollectiveOp& op, V value) {
    return map_
        .insert_or_assign(
            Key{op.kind, op.algorithm, op.nccl_algo, op.nccl_proto, op.bytes, op.groups},
            std::move(value))
        .first->second;
  }
  std::size_t size() const { return map_.size(); }

 private:
  struct Key {
    CollKind kind;
    Algorithm algorithm;
    NcclAlgo nccl_algo;
    NcclProto nccl_proto;
    double bytes;
    GroupList groups;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, V> map_;
};

}  // namespace zerosim
