// RecentOps: results of collectives seen lately, found by the identity of their group list (its
// address), kind, algorithm and size. A step repeats each layer's few collectives hundreds of
// times, and cost and byte counts are pure functions of those four, so a small table in front of
// a per-shape lookup answers almost every op. Direct-mapped (one probe: the slot is a hash of the
// four; a colliding op replaces the entry). Each entry holds its group list, so the address it is
// found by cannot become another list's while the entry lives.
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "sim/collectives/collective.hpp"

namespace zerosim {

template <class V, std::size_t N = 64>
class RecentOps {
  static_assert(std::has_single_bit(N), "N must be a power of two");

 public:
  const V* find(const CollectiveOp& op) const {
    const Entry& e = entries_[slot(op)];
    if (e.groups && &e.groups->get() == &op.groups.get() && e.bytes == op.bytes &&
        e.kind == op.kind && e.algorithm == op.algorithm)
      return &e.value;
    return nullptr;
  }
  const V& insert(const CollectiveOp& op, V value) {
    Entry& e = entries_[slot(op)];
    e = Entry{op.groups, op.kind, op.algorithm, op.bytes, std::move(value)};
    return e.value;
  }

 private:
  static std::size_t slot(const CollectiveOp& op) {
    std::uint64_t h = std::bit_cast<std::uint64_t>(op.bytes) * 0x9E3779B97F4A7C15ull;
    h ^= reinterpret_cast<std::uintptr_t>(&op.groups.get()) >> 4;
    h ^= static_cast<std::uint64_t>(op.kind) << 7 ^ static_cast<std::uint64_t>(op.algorithm) << 11;
    h *= 0xFF51AFD7ED558CCDull;
    return static_cast<std::size_t>(h >> 58) & (N - 1);
  }
  struct Entry {
    std::optional<GroupList> groups;  // none: an empty slot (and no reference count to touch)
    CollKind kind{};
    Algorithm algorithm{};
    double bytes = 0;
    V value{};
  };
  std::array<Entry, N> entries_;
};

}  // namespace zerosim
