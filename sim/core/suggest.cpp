// Did-you-mean by optimal string alignment distance (see suggest.hpp).
#include "sim/core/suggest.hpp"

#include <algorithm>

namespace zerosim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: i - 2, i - 1 and i.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_name(std::string_view given, const std::vector<std::string>& names) {
  const std::size_t limit = std::max<std::size_t>(1, given.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(given, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& names) {
  const std::string name = closest_name(given, names);
  return name.empty() ? "" : "; did you mean '" + name + "'?";
}

}  // namespace zerosim
