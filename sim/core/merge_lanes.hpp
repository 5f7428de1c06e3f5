// merge_lanes: one sorted sequence from several sorted ones (per-stream timelines, per-stream
// interval boundaries) by pairwise std::merge, left to right: ties keep lane order. Cheaper than
// sorting the concatenation, and than picking the minimum head per element.
#pragma once
#include <algorithm>
#include <iterator>
#include <vector>

namespace zerosim {

template <class T, class Less>
std::vector<T> merge_lanes(const std::vector<std::vector<T>>& lanes, Less less) {
  std::vector<T> out, tmp;
  std::size_t total = 0;
  for (const auto& l : lanes) total += l.size();
  out.reserve(total);
  tmp.reserve(total);
  for (const auto& l : lanes) {
    tmp.clear();
    std::merge(out.begin(), out.end(), l.begin(), l.end(), std::back_inserter(tmp), less);
    out.swap(tmp);
  }
  return out;
}

}  // namespace zerosim
