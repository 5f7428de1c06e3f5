// merge_lanes (sim/core/merge_lanes.hpp) equals a stable sort of the lanes' concatenation: every
// element once, in order, ties in lane order (checked on random lanes with many equal keys).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sim/core/merge_lanes.hpp"

using namespace zerosim;

namespace {
struct Item {
  int key, lane, index;
};
bool same(const Item& a, const Item& b) {
  return a.key == b.key && a.lane == b.lane && a.index == b.index;
}
}  // namespace

TEST_CASE("merge_lanes is a stable sort of the concatenated lanes") {
  std::mt19937 rng(7);
  auto less = [](const Item& a, const Item& b) {
    return a.key < b.key || (a.key == b.key && a.lane < b.lane);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int L = 1 + trial % 7;
    std::vector<std::vector<Item>> lanes(static_cast<std::size_t>(L));
    std::vector<Item> all;
    for (int l = 0; l < L; ++l) {
      const int n = static_cast<int>(rng() % 40);
      std::vector<int> keys;
      for (int i = 0; i < n; ++i) keys.push_back(static_cast<int>(rng() % 12));  // many ties
      std::sort(keys.begin(), keys.end());
      for (int i = 0; i < n; ++i) {
        lanes[static_cast<std::size_t>(l)].push_back({keys[static_cast<std::size_t>(i)], l, i});
        all.push_back(lanes[static_cast<std::size_t>(l)].back());
      }
    }
    std::stable_sort(all.begin(), all.end(), less);
    const std::vector<Item> got = merge_lanes(lanes, less);
    REQUIRE(got.size() == all.size());
    CHECK(std::equal(got.begin(), got.end(), all.begin(), same));
  }
  CHECK(merge_lanes(std::vector<std::vector<Item>>{}, less).empty());
}
