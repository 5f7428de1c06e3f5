#include "sim/report/warnings.hpp"

#include <fmt/format.h>

#include <map>

namespace zerosim::report {

std::vector<WarningGroup> group_warnings(const std::vector<ResultView>& results) {
  std::vector<WarningGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const ResultView& r : results)
    for (const std::string& w : r.warnings) {
      auto [it, added] = index.emplace(w, groups.size());
      if (added) groups.push_back({w, {}});
      std::vector<const ResultView*>& rows = groups[it->second].results;
      if (rows.empty() || rows.back() != &r) rows.push_back(&r);  // a result counts once
    }
  return groups;
}

std::string warning_scope(const WarningGroup& g, std::size_t total) {
  const std::size_t n = g.results.size();
  if (n == 1) return g.results.front()->label();
  if (n == total) return fmt::format("all {} results", n);
  return fmt::format("{} of {} results", n, total);
}

}  // namespace zerosim::report
