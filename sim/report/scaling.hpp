// Charts along an axis (XAxis): results that differ only in their strategy and one axis' value
// (tables.hpp: experiment_key) form an axis group, drawn as one series per strategy over the axis'
// values. choose_axes picks each result's x axis from what varies:
// - network bandwidth per node, as bars, where a group holds two or more bandwidths;
// - GPUs, as lines, where results differ only in node count: whole-cluster throughput (tokens/s)
//   and the scaling efficiency, tokens/s per GPU relative to the series' smallest cluster (1 =
//   linear). These are drawn for every such series, also when the bandwidth varies too;
// - tokens per GPU, as a line of TFLOPs per GPU, where results drawn along neither differ only in
//   tokens per GPU;
// - what is left, as bars over its one bandwidth.
// So every result is drawn, each as one mark.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

struct AxisGroup {
  XAxis axis = XAxis::bandwidth;
  std::string title;  // what the rows share (tables.hpp: experiment_title)
  std::vector<const ResultView*> rows;
  std::vector<double> xs;  // the distinct values of the axis, ascending
};

// The groups of rows along axis x, in order of first appearance.
std::vector<AxisGroup> axis_groups(const std::vector<const ResultView*>& rows, XAxis x);
std::vector<AxisGroup> axis_groups(const std::vector<ResultView>& results, XAxis x);
// The row of `like`'s strategy and variant at axis value x, or nullptr.
const ResultView* row_at(const AxisGroup& g, const ResultView& like, double x);
// A value of an axis as a category: "100", "preset" (bandwidth 0: the cluster preset's network).
std::string x_category(XAxis axis, double x);

// The axis groups over GPUs that span two or more GPU counts.
std::vector<AxisGroup> scaling_groups(const std::vector<ResultView>& results);
// Tokens/s per GPU of a row relative to its strategy's row at the group's smallest GPU count; NaN
// when that row is missing.
double scaling_efficiency(const AxisGroup& g, const ResultView& r);

// The x axis of every result's throughput chart (see the top of this file).
struct ChosenAxes {
  std::vector<AxisGroup> bandwidth, gpus, tokens_per_gpu;
};
ChosenAxes choose_axes(const std::vector<ResultView>& results);

// The axis' title: "Network bandwidth per node (Gbps)", "GPUs", "Tokens per GPU".
std::string axis_label(XAxis x);
// What a chart title says of its x axis: "" over bandwidth (the default), " vs GPUs",
// " vs tokens per GPU".
std::string versus(XAxis x);
// Throughput over the group's axis: TFLOPs per GPU over bandwidth (bars) or tokens per GPU
// (lines), whole-cluster tokens/s over GPUs (lines). One series per strategy and variant.
std::string throughput_chart(const AxisGroup& g);
std::string scaling_efficiency_chart(const AxisGroup& g);

}  // namespace zerosim::report
