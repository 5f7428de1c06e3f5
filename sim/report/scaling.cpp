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

// One series per strategy and variant over the group's axis values, valued by `value`.
template <class Value>
ChartSpec per_strategy(const AxisGroup& g, Value value) {
  ChartSpec c;
  for (double x : g.xs) c.categories.push_back(x_category(g.axis, x));
  std::map<std::string, std::size_t> variants;  // a strategy's variants: lighter shades of it
  for (const ResultView* s : distinct_strategies(g.rows)) {
    Series ser{s->strategy_name(), strategy_color(s->strategy, variants[s->strategy]++), {}};
    for (double x : g.xs) {
      const ResultView* r = row_at(g, *s, x);
      ser.values.push_back(r ? value(*r) : kNaN);
    }
    c.series.push_back(std::move(ser));
  }
  return c;
}

std::vector<const ResultView*> pointers(const std::vector<ResultView>& results) {
  std::vector<const ResultView*> out;
  out.reserve(results.size());
  for (const ResultView& r : results) out.push_back(&r);
  return out;
}

std::vector<AxisGroup> spanning(std::vector<AxisGroup> groups) {
  std::erase_if(groups, [](const AxisGroup& g) { return g.xs.size() < 2; });
  return groups;
}

}  // namespace

const ResultView* row_at(const AxisGroup& g, const ResultView& like, double x) {
  for (const ResultView* r : g.rows)
    if (r->strategy_key() == like.strategy_key() && r->x_value(g.axis) == x) return r;
  return nullptr;
}

std::string x_category(XAxis axis, double x) {
  if (axis == XAxis::bandwidth && !(x > 0)) return "preset";
  return fmt::format("{:g}", x);
}

std::vector<AxisGroup> axis_groups(const std::vector<const ResultView*>& rows, XAxis x) {
  std::vector<AxisGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const ResultView* r : rows) {
    const auto [it, fresh] = index.try_emplace(experiment_key(*r, x), groups.size());
    if (fresh) groups.push_back({x, experiment_title(*r, x), {}, {}});
    groups[it->second].rows.push_back(r);
  }
  for (AxisGroup& g : groups) {
    std::set<double> xs;
    for (const ResultView* r : g.rows) xs.insert(r->x_value(x));
    g.xs.assign(xs.begin(), xs.end());
  }
  return groups;
}

std::vector<AxisGroup> axis_groups(const std::vector<ResultView>& results, XAxis x) {
  return axis_groups(pointers(results), x);
}

std::vector<AxisGroup> scaling_groups(const std::vector<ResultView>& results) {
  return spanning(axis_groups(results, XAxis::gpus));
}

double scaling_efficiency(const AxisGroup& g, const ResultView& r) {
  const ResultView* base = row_at(g, r, g.xs.front());
  if (!base || !(base->tokens_per_s > 0) || r.gpus <= 0 || base->gpus <= 0) return kNaN;
  return (r.tokens_per_s / r.gpus) / (base->tokens_per_s / base->gpus);
}

ChosenAxes choose_axes(const std::vector<ResultView>& results) {
  const std::vector<const ResultView*> all = pointers(results);
  ChosenAxes out;
  out.gpus = scaling_groups(results);
  std::set<const ResultView*> drawn;
  const auto draw = [&drawn](const AxisGroup& g) { drawn.insert(g.rows.begin(), g.rows.end()); };
  for (const AxisGroup& g : out.gpus) draw(g);
  const std::vector<AxisGroup> by_bandwidth = axis_groups(all, XAxis::bandwidth);
  for (const AxisGroup& g : by_bandwidth)
    if (g.xs.size() > 1) draw(g);
  std::vector<const ResultView*> rest;
  for (const ResultView* r : all)
    if (!drawn.count(r)) rest.push_back(r);
  out.tokens_per_gpu = spanning(axis_groups(rest, XAxis::tokens_per_gpu));
  for (const AxisGroup& g : out.tokens_per_gpu) draw(g);
  // The rows of a group along bandwidth share every other field, so one row tells whether a line
  // chart draws the whole group.
  for (const AxisGroup& g : by_bandwidth)
    if (g.xs.size() > 1 || !drawn.count(g.rows.front())) out.bandwidth.push_back(g);
  return out;
}

namespace {

// An axis' title and what a chart title says of it.
struct AxisText {
  const char* label;
  const char* versus;
};

AxisText axis_text(XAxis x) {
  switch (x) {
    case XAxis::bandwidth:
      return {"Network bandwidth per node (Gbps)", ""};
    case XAxis::gpus:
      return {"GPUs", " vs GPUs"};
    case XAxis::tokens_per_gpu:
      return {"Tokens per GPU", " vs tokens per GPU"};
  }
  return {"", ""};
}

}  // namespace

std::string axis_label(XAxis x) { return axis_text(x).label; }

std::string versus(XAxis x) { return axis_text(x).versus; }

std::string throughput_chart(const AxisGroup& g) {
  // Whole-cluster tokens/s over GPUs (what grows with them); TFLOPs per GPU over the other axes.
  const bool cluster = g.axis == XAxis::gpus;
  ChartSpec c = per_strategy(g, [cluster](const ResultView& r) {
    return cluster ? r.tokens_per_s / 1e3 : r.tflops_per_gpu;
  });
  c.title = "Throughput" + versus(g.axis) + ": " + g.title;
  c.x_label = axis_label(g.axis);
  c.y_label =
      cluster ? "Throughput (thousand tokens/s, whole cluster)" : "Throughput (TFLOPs per GPU)";
  return g.axis == XAxis::bandwidth ? bar_chart(c) : line_chart(c);
}

std::string scaling_efficiency_chart(const AxisGroup& g) {
  ChartSpec c = per_strategy(g, [&g](const ResultView& r) { return scaling_efficiency(g, r); });
  c.title = "Scaling efficiency: " + g.title;
  c.x_label = axis_label(g.axis);
  c.y_label = fmt::format("Tokens/s per GPU relative to {:g} GPUs", g.xs.front());
  c.ref_lines.push_back({1.0, "linear scaling", "#555555"});
  return line_chart(c);
}

}  // namespace zerosim::report
