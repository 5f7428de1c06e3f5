#include "sim/core/closest_match.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/core/utf8.hpp"

namespace zerosim {

namespace {
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: i - 2, i - 1 and i.
  std::vector<std::size_t> two(b.size() + 1), one(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) one[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string_view>& known) {
  // Words of 1-2 characters are suggested nothing: one edit makes them anything.
  const std::size_t bound = std::min<std::size_t>(3, word.size() / 3);
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::string_view found;
  for (const std::string_view k : known) {
    const std::size_t d = edit_distance(word, k);
    if (d < best && k != word) {
      best = d;
      found = k;
    }
  }
  // At least one edit allowed for words of 3 or more characters.
  const std::size_t allowed = word.size() >= 3 ? std::max<std::size_t>(1, bound) : 0;
  return best <= allowed ? std::string(found) : std::string();
}

std::string closest_match(std::string_view word, std::initializer_list<std::string_view> known) {
  return closest_match(word, std::vector<std::string_view>(known));
}

std::string closest_match(std::string_view word, const std::vector<std::string>& known) {
  return closest_match(word, std::vector<std::string_view>(known.begin(), known.end()));
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known) {
  return did_you_mean(word, std::vector<std::string_view>(known.begin(), known.end()));
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known) {
  const std::string m = closest_match(word, known);
  return m.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", printable(m));
}

}  // namespace zerosim
