// RecentOps (sim/net/recent_ops.hpp): found only by the same group list object, kind, algorithm and
// size; a colliding op replaces an entry, never returns its value; and a list freed by its op
// cannot be mistaken for a new list allocated later (the entry holds it, so the address stays
// taken).
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sim/net/recent_ops.hpp"

using namespace zerosim;

namespace {
CollectiveOp op_of(GroupList groups, double bytes, CollKind kind = CollKind::AllGather) {
  return CollectiveOp{kind, Algorithm::Ring, std::move(groups), bytes, {}};
}
}  // namespace

TEST_CASE("an op is found by its list object, kind, algorithm and size only") {
  RecentOps<int, 4> memo;
  const GroupList world{{0, 1, 2, 3}};
  const GroupList equal_copy{{0, 1, 2, 3}};  // equal contents, another object
  memo.insert(op_of(world, 100), 7);
  REQUIRE(memo.find(op_of(world, 100)) != nullptr);
  CHECK(*memo.find(op_of(world, 100)) == 7);
  CHECK(memo.find(op_of(world, 200)) == nullptr);
  CHECK(memo.find(op_of(world, 100, CollKind::ReduceScatter)) == nullptr);
  CollectiveOp direct = op_of(world, 100);
  direct.algorithm = Algorithm::Direct;
  CHECK(memo.find(direct) == nullptr);
  CHECK(memo.find(op_of(equal_copy, 100)) == nullptr);  // a miss costs a lookup, never a wrong hit
  CHECK(memo.find(CollectiveOp{}) == nullptr);          // empty slots match nothing
}

TEST_CASE("a colliding op replaces the entry; every op inserted last is found") {
  RecentOps<int, 4> memo;  // 4 slots: 40 sizes must collide
  const GroupList g{{0, 1}};
  int found = 0;
  for (int i = 0; i < 40; ++i) {
    memo.insert(op_of(g, i), i);
    REQUIRE(memo.find(op_of(g, i)) != nullptr);
    CHECK(*memo.find(op_of(g, i)) == i);
  }
  for (int i = 0; i < 40; ++i)
    if (const int* v = memo.find(op_of(g, i))) {
      CHECK(*v == i);  // never another op's value
      ++found;
    }
  CHECK(found <= 4);
  CHECK(found >= 1);
}

TEST_CASE("a freed op's list keeps its address: later lists never alias it") {
  RecentOps<int, 8> memo;
  const GroupList::Groups* first = nullptr;
  {
    const CollectiveOp temp = op_of(GroupList{{0, 1, 2, 3}}, 64);
    first = &temp.groups.get();
    memo.insert(temp, 1);
  }  // the op and its GroupList copy are gone; the entry still holds the list
  std::vector<GroupList> later;
  for (int i = 0; i < 64; ++i) {
    later.push_back(GroupList{{i, i + 1}});
    CHECK(&later.back().get() != first);
    CHECK(memo.find(op_of(later.back(), 64)) == nullptr);
  }
}
