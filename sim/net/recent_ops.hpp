// RecentOps: the results of the last N collectives seen, found by the identity of their group list
// (its address), kind, algorithm and size. A step repeats each layer's few collectives hundreds of
// times, and cost and byte counts are pure functions of those four, so a short list in front of a
// per-shape lookup answers almost every op. Each entry holds its group list: the address it is
// found by cannot become another list's while the entry lives.
#pragma once
#include <array>
#include <cstddef>

#include "sim/collectives/collective.hpp"

namespace zerosim {

template <class V, std::size_t N = 8>
class RecentOps {
 public:
  const V* find(const CollectiveOp& op) const {
    for (const Entry& e : entries_)
      if (&e.groups.get() == &op.groups.get() && e.kind == op.kind && e.algorithm == op.algorithm &&
          e.bytes == op.bytes && e.set)
        return &e.value;
    return nullptr;
  }
  // Replaces the oldest entry.
  const V& insert(const CollectiveOp& op, V value) {
    Entry& e = entries_[next_];
    next_ = (next_ + 1) % N;
    e = Entry{true, op.groups, op.kind, op.algorithm, op.bytes, std::move(value)};
    return e.value;
  }

 private:
  struct Entry {
    bool set = false;
    GroupList groups;
    CollKind kind{};
    Algorithm algorithm{};
    double bytes = 0;
    V value{};
  };
  std::array<Entry, N> entries_;
  std::size_t next_ = 0;
};

}  // namespace zerosim
