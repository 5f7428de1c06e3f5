#include "sim/report/scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sim/report/svg_chart.hpp"
#include "sim/report/tables.hpp"

namespace zerosim::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string scaling_title(const ResultView& r) {
  std::string out = r.model.empty() ? "?" : r.model;
  if (!r.cluster.empty()) out += " on " + r.cluster;
  const double bw = r.network_gbps_per_node();
  if (bw > 0) out += fmt::format(", {:g} Gbps per node", bw);
  return out + experiment_details(r);
}

// The row of `like`'s strategy and variant at `gpus`.
const ResultView* at(const ScalingGroup& g, const ResultView& like, int gpus) {
  for (const ResultView* r : g.rows)
    if (r->strategy_key() == like.strategy_key() && r->gpus == gpus) return r;
  return nullptr;
}

// One series per strategy over the group's GPU counts, valued by `value`.
template <class Value>
ChartSpec per_strategy(const ScalingGroup& g, Value value) {
  ChartSpec c;
  for (int n : g.gpus) c.categories.push_back(fmt::format("{}", n));
  for (const ResultView* s : distinct_strategies(g.rows)) {
    Series ser{s->strategy_name(), strategy_color(s->strategy), {}};
    for (int n : g.gpus) {
      const ResultView* r = at(g, *s, n);
      ser.values.push_back(r ? value(*r) : kNaN);
    }
    c.series.push_back(std::move(ser));
  }
  return c;
}

}  // namespace

std::string scaling_key(const ResultView& r) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.cluster,
                     r.network_gbps_per_node(), r.fabric, r.oversubscription, r.model,
                     r.tokens_per_gpu, r.seq_len, r.grad_accum, r.tier, r.profile);
}

std::vector<ScalingGroup> scaling_groups(const std::vector<ResultView>& results) {
  std::vector<ScalingGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const ResultView& r : results) {
    const auto [it, fresh] = index.try_emplace(scaling_key(r), groups.size());
    if (fresh) groups.push_back({scaling_title(r), {}, {}});
    groups[it->second].rows.push_back(&r);
  }
  std::vector<ScalingGroup> out;
  for (ScalingGroup& g : groups) {
    std::set<int> gpus;
    for (const ResultView* r : g.rows)
      if (r->gpus > 0) gpus.insert(r->gpus);
    if (gpus.size() < 2) continue;
    g.gpus.assign(gpus.begin(), gpus.end());
    out.push_back(std::move(g));
  }
  return out;
}

double scaling_efficiency(const ScalingGroup& g, const ResultView& r) {
  const ResultView* base = at(g, r, g.gpus.front());
  if (!base || !(base->tokens_per_s > 0) || r.gpus <= 0) return kNaN;
  return (r.tokens_per_s / r.gpus) / (base->tokens_per_s / base->gpus);
}

std::string scaling_throughput_chart(const ScalingGroup& g) {
  ChartSpec c = per_strategy(g, [](const ResultView& r) { return r.tokens_per_s / 1e3; });
  c.title = "Throughput vs GPUs: " + g.title;
  c.x_label = "GPUs";
  c.y_label = "Throughput (thousand tokens/s, whole cluster)";
  return line_chart(c);
}

std::string scaling_efficiency_chart(const ScalingGroup& g) {
  ChartSpec c = per_strategy(g, [&g](const ResultView& r) { return scaling_efficiency(g, r); });
  c.title = "Scaling efficiency: " + g.title;
  c.x_label = "GPUs";
  c.y_label = fmt::format("Tokens/s per GPU relative to {} GPUs", g.gpus.front());
  c.ref_lines.push_back({1.0, "linear scaling", "#555555"});
  return line_chart(c);
}

}  // namespace zerosim::report
