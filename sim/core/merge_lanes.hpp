// merge_lanes: one sorted sequence from several sorted ones (per-stream timelines) by two-way
// std::merge, always of the two shortest sequences left (as in Huffman coding): a step's lanes
// differ a lot in length (a reduce stream holds a few dozen ops, the compute and gather streams
// thousands), and merging the short ones first copies each long one fewer times. The result does
// not depend on the merge order as long as `less` orders any two elements of different lanes (a
// lane key as its last criterion); elements of one lane that compare equal keep their order
// (std::merge is stable and a lane is never split). Cheaper than sorting the concatenation.
#pragma once
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace zerosim {

template <class T, class Less>
std::vector<T> merge_lanes(std::vector<std::vector<T>> lanes, Less less) {
  if (lanes.empty()) return {};
  while (lanes.size() > 1) {
    // The two shortest to the back (lanes are few: a step has 3-4 streams).
    auto shorter = [](const std::vector<T>& a, const std::vector<T>& b) {
      return a.size() > b.size();
    };
    std::sort(lanes.begin(), lanes.end(), shorter);
    std::vector<T> b = std::move(lanes.back());
    lanes.pop_back();
    std::vector<T> a = std::move(lanes.back());
    lanes.pop_back();
    // Reserved, not sized: sizing would construct every element (its default member
    // initializers written) only for the merge to overwrite it.
    std::vector<T> m;
    m.reserve(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(m), less);
    lanes.push_back(std::move(m));
  }
  return std::move(lanes.front());
}

}  // namespace zerosim
