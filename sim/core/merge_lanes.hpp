// merge_lanes: one sorted sequence from several sorted ones (per-stream timelines, per-stream
// interval boundaries) by a balanced tree of std::merge, so each element is copied about
// log2(lanes) times. Ties keep lane order (std::merge takes the left range first and pairs keep
// their order). Cheaper than sorting the concatenation.
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
    std::vector<std::vector<T>> next;
    next.reserve((lanes.size() + 1) / 2);
    for (std::size_t i = 0; i + 1 < lanes.size(); i += 2) {
      // Reserved, not sized: sizing would construct every element (its default member
      // initializers written) only for the merge to overwrite it.
      std::vector<T> m;
      m.reserve(lanes[i].size() + lanes[i + 1].size());
      std::merge(lanes[i].begin(), lanes[i].end(), lanes[i + 1].begin(), lanes[i + 1].end(),
                 std::back_inserter(m), less);
      next.push_back(std::move(m));
    }
    if (lanes.size() % 2 == 1) next.push_back(std::move(lanes.back()));
    lanes = std::move(next);
  }
  return std::move(lanes.front());
}

}  // namespace zerosim
