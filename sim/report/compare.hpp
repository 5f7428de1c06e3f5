// Diff of two result files: scenarios matched by their scenario object (ResultView::identity), per
// scenario the step time and TFLOPs/GPU of both and the change in percent; unmatched scenarios
// listed. Matching can leave out scenario keys (`compare --by tier`); when nothing matches and
// the files differ in keys that are constant within each (the flow and the analytic tier of one
// sweep, two profiles), those keys are left out and the comparison says so.
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

struct Comparison {
  std::vector<CompareRow> rows;  // in the order of file a, then scenarios only in b
  // Top-level scenario keys left out of matching: those asked for, or those found (with their
  // values in a and b, e.g. "tier: flow vs analytic").
  std::vector<std::string> across;
  std::string found;  // empty unless keys were found: what differed
};

// `by`: scenario keys (top level of the result's "scenario") not matched on.
Comparison compare_results(const std::vector<ResultView>& a, const std::vector<ResultView>& b,
                           const std::vector<std::string>& by = {});
// A Markdown table (readable in a terminal too).
std::string render_compare(const Comparison& c, const std::string& name_a,
                           const std::string& name_b);

}  // namespace zerosim::report
