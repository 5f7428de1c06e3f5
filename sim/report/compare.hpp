// Diff of two result files: scenarios matched by their scenario object (ResultView::identity), per
// scenario the step time and TFLOPs/GPU of both and the change in percent; unmatched scenarios
// listed.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

struct CompareRow {
  std::string label;
  const ResultView* a = nullptr;
  const ResultView* b = nullptr;
  double step_delta_pct() const { return (b->step_time_s / a->step_time_s - 1) * 100; }
  double tflops_delta_pct() const {
    return a->tflops_per_gpu > 0 ? (b->tflops_per_gpu / a->tflops_per_gpu - 1) * 100 : 0;
  }
};

// Rows in the order of file a, then scenarios only in b.
std::vector<CompareRow> compare_results(const std::vector<ResultView>& a,
                                        const std::vector<ResultView>& b);
// A Markdown table (readable in a terminal too).
std::string render_compare(const std::vector<CompareRow>& rows, const std::string& name_a,
                           const std::string& name_b);

}  // namespace zerosim::report
