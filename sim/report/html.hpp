// The self-contained HTML report: inline CSS and inline SVG charts (no scripts, no external
// resources) for throughput vs network bandwidth per strategy (the ZeRO++ paper's style), speedup
// of ZeRO++ over ZeRO-3, the stacked step-time breakdown and memory per GPU against capacity, then
// the full table.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"
#include "sim/report/training_time.hpp"

namespace zerosim::report {

// budget.tokens > 0 adds a time-to-train section (training_time.hpp).
std::string render_html(const std::vector<ResultView>& results, const std::string& source,
                        const TrainingBudget& budget = {});

}  // namespace zerosim::report
