#include "sim/report/compare.hpp"

#include <fmt/format.h>

#include <map>

#include "sim/core/units.hpp"
#include "sim/report/tables.hpp"

namespace zerosim::report {

std::vector<CompareRow> compare_results(const std::vector<ResultView>& a,
                                        const std::vector<ResultView>& b) {
  std::map<std::string, const ResultView*> in_b;
  for (const auto& r : b) in_b.emplace(r.identity, &r);  // first occurrence wins
  std::map<std::string, bool> used;
  std::vector<CompareRow> rows;
  for (const auto& r : a) {
    CompareRow row{r.label(), &r, nullptr};
    auto it = in_b.find(r.identity);
    if (it != in_b.end() && !used[it->first]) {
      row.b = it->second;
      used[it->first] = true;
    }
    rows.push_back(row);
  }
  for (const auto& r : b)
    if (!used[r.identity]) {
      rows.push_back({r.label(), nullptr, &r});
      used[r.identity] = true;
    }
  return rows;
}

std::string render_compare(const std::vector<CompareRow>& rows, const std::string& name_a,
                           const std::string& name_b) {
  std::string o = fmt::format("A = {}\nB = {}\n\n", name_a, name_b);
  o += "| scenario | step A | step B | step delta | TFLOPs A | TFLOPs B | TFLOPs delta |\n";
  o += "|---|---:|---:|---:|---:|---:|---:|\n";
  int only_a = 0, only_b = 0;
  for (const auto& r : rows) {
    if (r.a && r.b) {
      o += fmt::format("| {} | {} | {} | {:+.2f}% | {:.2f} | {:.2f} | {:+.2f}% |\n",
                       md_cell(r.label), format_time(r.a->step_time_s),
                       format_time(r.b->step_time_s), r.step_delta_pct(), r.a->tflops_per_gpu,
                       r.b->tflops_per_gpu, r.tflops_delta_pct());
    } else if (r.a) {
      ++only_a;
      o += fmt::format("| {} | {} | only in A | | {:.2f} | | |\n", md_cell(r.label),
                       format_time(r.a->step_time_s), r.a->tflops_per_gpu);
    } else {
      ++only_b;
      o += fmt::format("| {} | only in B | {} | | | {:.2f} | |\n", md_cell(r.label),
                       format_time(r.b->step_time_s), r.b->tflops_per_gpu);
    }
  }
  o += fmt::format("\n{} matched, {} only in A, {} only in B\n", rows.size() - only_a - only_b,
                   only_a, only_b);
  return o;
}

}  // namespace zerosim::report
