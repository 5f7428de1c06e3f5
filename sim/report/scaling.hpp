// Scaling charts: how throughput grows with the cluster. Results that differ only in their node
// count (same cluster type, network per node, model, batch, tier and profile) form a scaling
// series per strategy; with two or more GPU counts a report draws the whole step's throughput
// (tokens/s) against GPUs and the scaling efficiency: tokens/s per GPU relative to the series'
// smallest cluster (1 = linear scaling).
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

struct ScalingGroup {
  std::string title;  // what the series share: model, cluster type, network, batch
  std::vector<const ResultView*> rows;
  std::vector<int> gpus;  // the distinct GPU counts, ascending (at least two)
};

// Key of a result's scaling series: its group key without the node count, plus the network
// bandwidth per node.
std::string scaling_key(const ResultView& r);
// The scaling groups of a result set, in order of first appearance; only those that span two or
// more GPU counts.
std::vector<ScalingGroup> scaling_groups(const std::vector<ResultView>& results);
// Tokens/s per GPU of a row relative to its strategy's row at the group's smallest GPU count; NaN
// when that row is missing.
double scaling_efficiency(const ScalingGroup& g, const ResultView& r);

std::string scaling_throughput_chart(const ScalingGroup& g);
std::string scaling_efficiency_chart(const ScalingGroup& g);

}  // namespace zerosim::report
