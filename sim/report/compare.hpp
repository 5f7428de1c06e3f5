// Diff of two result files: scenarios matched by their scenario object (ResultView::identity), per
// scenario the step time and TFLOPs/GPU of both and the change in percent; unmatched scenarios
// listed. A scenario is what ran, not how it was given: the strategy's source (a DeepSpeed or
// FSDP config's path, or --strategy), the model's description and the rule that chose the
// sequence length are not matched on, so a paper DeepSpeed config and `--strategy` runs of one
// scenario pair. Matching can leave out scenario keys, nested ones by dotted path (`compare --by
// tier,strategy.reduce_bucket_elems`); when nothing matches and the files differ in leaves that
// are constant within each (the flow and the analytic tier of one sweep, two profiles, the bucket
// sizes of the paper's DeepSpeed configs against DeepSpeed's defaults), those leaves are left out
// and the comparison names them with their values.
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
  // Scenario keys (dotted paths) left out of matching: those asked for, or those found (with
  // their values in a and b, e.g. "tier: flow vs analytic").
  std::vector<std::string> across;
  std::string found;  // empty unless keys were found: what differed
};

// `by`: scenario keys not matched on: top-level keys of the result's "scenario" or dotted paths
// below them ("strategy.reduce_bucket_elems").
Comparison compare_results(const std::vector<ResultView>& a, const std::vector<ResultView>& b,
                           const std::vector<std::string>& by = {});
// A Markdown table (readable in a terminal too).
std::string render_compare(const Comparison& c, const std::string& name_a,
                           const std::string& name_b);

}  // namespace zerosim::report
