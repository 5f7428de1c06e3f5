// GroupList: the rank groups of a collective, immutable and shared. A step issues hundreds of
// collectives over the same few group lists (the world, the hpZ partitions, the nodes, the rails);
// sharing one copy makes creating, copying and comparing ops O(1) instead of O(world size).
// Reads like a const std::vector<std::vector<int>>; equality compares contents (shared lists
// compare by address first).
#pragma once
#include <compare>
#include <initializer_list>
#include <memory>
#include <vector>

namespace zerosim {

class GroupList {
 public:
  using Groups = std::vector<std::vector<int>>;
  using const_iterator = Groups::const_iterator;

  GroupList() : p_(empty_list()) {}
  GroupList(Groups g) : p_(std::make_shared<const Groups>(std::move(g))) {}  // NOLINT: implicit
  GroupList(std::initializer_list<std::vector<int>> g) : GroupList(Groups(g)) {}

  const Groups& get() const { return *p_; }
  operator const Groups&() const { return *p_; }  // NOLINT: reads as the vector it wraps
  std::size_t size() const { return p_->size(); }
  bool empty() const { return p_->empty(); }
  const std::vector<int>& front() const { return p_->front(); }
  const std::vector<int>& operator[](std::size_t i) const { return (*p_)[i]; }
  const_iterator begin() const { return p_->begin(); }
  const_iterator end() const { return p_->end(); }

  friend bool operator==(const GroupList& a, const GroupList& b) {
    return a.p_ == b.p_ || *a.p_ == *b.p_;
  }
  friend auto operator<=>(const GroupList& a, const GroupList& b) { return *a.p_ <=> *b.p_; }

 private:
  static const std::shared_ptr<const Groups>& empty_list() {
    static const std::shared_ptr<const Groups> e = std::make_shared<const Groups>();
    return e;
  }
  std::shared_ptr<const Groups> p_;
};

}  // namespace zerosim
