// A report's warnings, grouped: one entry per distinct warning text with the results that gave
// it, so a warning every scenario of a sweep shares is one line with its count, not one per row.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

struct WarningGroup {
  std::string text;
  std::vector<const ResultView*> results;  // in input order
};

// In order of first appearance.
std::vector<WarningGroup> group_warnings(const std::vector<ResultView>& results);
// Who gave it: "all 40 results", "3 of 40 results", or the one result's label.
std::string warning_scope(const WarningGroup& group, std::size_t total);

}  // namespace zerosim::report
