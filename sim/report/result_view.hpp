// What the renderers (CSV, Markdown, HTML, compare) read of a result: the fields of a StepResult
// that rows, groups and charts show. view_of is the one mapping from a StepResult; results files
// are read strictly into StepResults first (step_result_from_json: a wrong or missing
// schema_version, an unknown, missing or mistyped key is an InputError naming the file, the JSON
// path and the rule).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/result/step_result.hpp"

namespace zerosim::report {

// The axes a report draws results along: network bandwidth per node (bar charts), GPUs and tokens
// per GPU (line charts). Results that differ only in their strategy and one axis' value are drawn
// in one chart over that axis.
enum class XAxis { bandwidth, gpus, tokens_per_gpu };

struct ResultView {
  // scenario
  std::string cluster, model, strategy, tier, profile, fabric;
  std::string gpu_model;  // "H100-SXM5-80GB"
  bool show_gpu = false;  // label() names the GPU: the results read together have several types
  double oversubscription = 1;
  int nodes = 0, gpus = 0, nics_per_node = 0, seq_len = 0, grad_accum = 1;
  std::int64_t tokens_per_gpu = 0;
  std::int64_t params = 0, active_params = 0;  // total, and those one token uses
  double nic_gbps = 0;
  // metrics
  double step_time_s = 0, tflops_per_gpu = 0, tokens_per_s = 0;
  // Fractions of the peak (StepResult); NaN in a document written before they were (schema 1).
  double mfu = 0, hfu = 0;
  double compute_s = 0, recompute_s = 0, optimizer_s = 0, param_fetch_s = 0, quant_kernels_s = 0;
  double exposed_all_gather_s = 0, exposed_reduce_scatter_s = 0, exposed_all_to_all_s = 0;
  double exposed_all_reduce_s = 0, exposed_kernels_s = 0, idle_s = 0;
  double inter_node_bytes = 0, intra_node_bytes = 0;
  double peak_bytes_per_gpu = 0, capacity_bytes = 0;
  bool fits = true;
  std::vector<std::string> warnings;
  std::string identity;  // the result's scenario object as JSON text: what compare matches
  int plan_rank = 0;     // a plan document's candidate: its rank (1 = first); 0 otherwise
  // The ds_config block that turns the strategy on ({"zero_optimization": {...}}, compact JSON;
  // deepspeed_block.hpp); empty for PyTorch FSDP.
  std::string deepspeed_block;
  // Settings that tell apart runs of one strategy: qwZ bits, hpZ group size, qgZ chunks when not
  // their defaults ("qwZ INT4, hpZ k=8"); empty for the defaults.
  std::string variant;
  bool checkpointing = true;  // activation checkpointing
  std::string attention;      // flash | eager, as the simulator resolved it
  // The DeepSpeed release whose rules ran ("0.19"), and hpZ's rule under it ("when-present"; empty
  // without hpZ): what a recommendation assumes.
  std::string deepspeed_version, hpz_rule;
  std::string hpz_rule_text;  // what the rule does (describe(HpzRule)); empty without hpZ

  // The strategy with its variant: what rows of one experiment are told apart by.
  std::string strategy_key() const {
    return variant.empty() ? strategy : strategy + " [" + variant + "]";
  }
  // "ZeRO++", "ZeRO++ (qwZ INT4)".
  std::string strategy_name() const;
  // ZeRO++ techniques on (StrategyId::techniques; 0 for a name outside the vocabulary): what the
  // decision rule counts (sim/result/recommendation.hpp).
  int techniques() const;

  double network_gbps_per_node() const { return nics_per_node * nic_gbps; }
  // The row's value on an axis: Gbps per node, GPUs or tokens per GPU.
  double x_value(XAxis x) const;
  // Critical-path attribution of the step: what the compute stream does or waits on, by part
  // (compute, recompute, optimizer, parameter fetch, exposed communication by kind, exposed
  // kernels, idle). The parts add up to the step time.
  struct Part {
    const char* name;
    double seconds;
  };
  std::vector<Part> step_attribution() const {
    return {{"compute", compute_s},
            {"recompute", recompute_s},
            {"optimizer", optimizer_s},
            {"stage-3 parameter fetch", param_fetch_s},
            {"exposed all-gather", exposed_all_gather_s},
            {"exposed reduce-scatter", exposed_reduce_scatter_s},
            {"exposed all-to-all", exposed_all_to_all_s},
            {"exposed all-reduce", exposed_all_reduce_s},
            {"exposed kernels", exposed_kernels_s},
            {"idle (dependencies)", idle_s}};
  }
  double exposed_comm_s() const {
    return exposed_all_gather_s + exposed_reduce_scatter_s + exposed_all_to_all_s +
           exposed_all_reduce_s;
  }
  // Model, nodes, the GPU model when show_gpu, network, strategy and experiment_details:
  // "gpt-18b, 24 nodes, 4x100 Gbps, ZeRO++, 2048 tokens/GPU, eager attention".
  std::string label() const;
};

// What an experiment's title adds after model, cluster, size and network: the fabric when not a
// plain rail, tokens per GPU (unless they are the x axis), accumulation, a non-flow tier,
// checkpointing when off, the attention and a profile other than the cluster's (", 2048
// tokens/GPU, analytic tier, flash attention").
std::string experiment_details(const ResultView& r, XAxis x = XAxis::bandwidth);

ResultView view_of(const StepResult& r);
// view_of each; when the results hold more than one GPU model, every label names its GPU.
std::vector<ResultView> views_of(const std::vector<StepResult>& results);

// The results of a results document, each read by step_result_from_json: a sweep document
// ({kind: "sweep", results: [...]}), a plan document ({kind: "plan", candidates: [{result}, ...]}),
// a bare array of results, or one simulate result. At least one result.
std::vector<StepResult> read_step_results(const json& doc, const std::string& file);
// read_step_results, as views.
std::vector<ResultView> read_results(const json& doc, const std::string& file);
// read_results of a results file.
std::vector<ResultView> load_results(const std::string& path);

// The display name of a result's strategy name (StrategyId::display: "ZeRO-3 + qwZ + hpZ" for
// "zero3+qwz+hpz"); a name outside the vocabulary as it is.
std::string strategy_display(const std::string& strategy);
// MFU or HFU as a percentage ("39.1%"), "-" when the document has none.
std::string format_utilization(double fraction);
// Sort rank of a strategy (StrategyId::rank: ZeRO-1 and ZeRO-2 first, then ZeRO-3, its single
// techniques, pairs, ZeRO++, HSDP, FSDP); unknown ones after.
int strategy_rank(const std::string& strategy);
// One row per strategy with its variant (ResultView::strategy_key) of a set of rows, ZeRO-3 first
// and ZeRO++ last: what charts draw a series or a category for.
std::vector<const ResultView*> distinct_strategies(const std::vector<const ResultView*>& rows);
// A strategy's color in every chart, the one home of chart colors (ZeRO-3's variants by their
// rank, stages 1 and 2, HSDP and FSDP's their own; unknown strategies share one). shade > 0: the
// same color lighter, for the shade-th variant of the strategy (qwZ INT4, hpZ k=8) in one chart.
std::string strategy_color(const std::string& strategy, std::size_t shade = 0);
// Series that are no strategy (experiments, one per group) are grey, never a strategy's color.
std::string neutral_color(std::size_t k);

}  // namespace zerosim::report
