// Tabular renderers of results: CSV (one row per scenario, every metric, machine-readable) and
// Markdown (readable tables with speedups over ZeRO-3). Strings from input files are escaped for
// each format.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"
#include "sim/report/training_time.hpp"
#include "sim/result/recommendation.hpp"

namespace zerosim::report {

std::string render_csv(const std::vector<ResultView>& results);
// render_csv's parts, for writing one row at a time: the header line and one result's line.
std::string csv_header();
std::string csv_row(const ResultView& r);
// budget.tokens > 0 adds a time-to-train section (training_time.hpp).
std::string render_markdown(const std::vector<ResultView>& results, const std::string& source,
                            const TrainingBudget& budget = {});

// One CSV field: quoted when it holds a comma, quote or newline; a leading = + - @ is prefixed with
// ' so spreadsheets do not evaluate it as a formula.
std::string csv_field(const std::string& text);
// Markdown table cell: | and \ escaped, HTML specials as entities, newlines as spaces.
std::string md_cell(const std::string& text);

// Key of the results drawn together along axis x: every scenario field but the strategy, its
// variant and x's (bandwidth: the NICs and their speed; GPUs: the node count).
std::string experiment_key(const ResultView& r, XAxis x);
// Title of those results: model, cluster, size and network unless x is one of them, and
// experiment_details ("gpt-18b on dgx2-v100 x24 nodes (384 GPUs), 2048 tokens/GPU").
std::string experiment_title(const ResultView& r, XAxis x);
// The experiment group a result belongs to: its results differ only in strategy and bandwidth.
inline std::string group_key(const ResultView& r) { return experiment_key(r, XAxis::bandwidth); }
inline std::string group_title(const ResultView& r) {
  return experiment_title(r, XAxis::bandwidth);
}
// The ZeRO-3 result of the same group and bandwidth, or nullptr.
const ResultView* zero3_baseline(const std::vector<ResultView>& all, const ResultView& r);

// The configuration to use for one group at one network bandwidth, by the one decision rule
// (sim/result/recommendation.hpp: the fastest that fits, or the fastest of those with fewer ZeRO++
// techniques within kTieFraction of it). pick is nullptr when nothing fits.
struct Recommendation {
  const ResultView* pick = nullptr;
  const ResultView* fastest = nullptr;  // the fastest that fits
  const ResultView* zero3 = nullptr;    // the ZeRO-3 row, fitting or not
  std::string sentence() const;         // "ZeRO++ (2.25x ZeRO-3's throughput)" and the tie rule
  // "ds_config: {"zero_optimization": {...}}", what turns the pick on; "" without a pick or for
  // PyTorch FSDP.
  std::string how() const;
};
Recommendation recommend(const std::vector<const ResultView*>& same_bandwidth);
// A plan's candidates (plan_rank > 0) are alternatives for one global batch: one recommendation
// over all of them that ran on the flow tier (all when none did), the decision `plan` makes
// (plan::recommend); nullopt for results of no plan.
std::optional<Recommendation> plan_recommendation(const std::vector<ResultView>& results);
// "#3 ZeRO-3 + qwZ + qgZ, micro-batch 1 x 4, activation checkpointing on: " and the sentence.
std::string plan_recommendation_line(const Recommendation& rec);
// Per network bandwidth of a group, in increasing bandwidth, why techniques that do not help do
// not (technique_notes.hpp).
std::vector<std::pair<double, std::vector<std::string>>> notes_by_bandwidth(
    const std::vector<const ResultView*>& group);
// One recommendation per network bandwidth of a group, in increasing bandwidth.
std::vector<std::pair<double, Recommendation>> recommendations(
    const std::vector<const ResultView*>& group);

}  // namespace zerosim::report
