#include "sim/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/core/units.hpp"
#include "sim/report/scaling.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/report/tables.hpp"
#include "sim/report/training_time.hpp"
#include "sim/report/warnings.hpp"

namespace zerosim::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Legend names of experiment groups: the model and whatever else tells the groups apart (nodes,
// tokens per GPU, fabric, ...), so no two groups share a name unless they share every field shown.
std::vector<std::string> legend_names(const std::vector<AxisGroup>& groups) {
  using Piece = std::string (*)(const ResultView&);
  static const Piece pieces[] = {
      [](const ResultView& r) { return r.cluster; },
      [](const ResultView& r) {
        return fmt::format("{} node{}", r.nodes, r.nodes == 1 ? "" : "s");
      },
      [](const ResultView& r) { return fmt::format("{} {:g}:1", r.fabric, r.oversubscription); },
      [](const ResultView& r) { return fmt::format("{} tok/GPU", r.tokens_per_gpu); },
      [](const ResultView& r) { return fmt::format("seq {}", r.seq_len); },
      [](const ResultView& r) { return fmt::format("ga {}", r.grad_accum); },
      [](const ResultView& r) { return r.tier; },
      [](const ResultView& r) { return std::string(r.checkpointing ? "ckpt" : "no ckpt"); },
      [](const ResultView& r) { return r.attention + " attn"; },
      [](const ResultView& r) { return "profile " + r.profile; }};
  std::vector<std::string> names;
  names.reserve(groups.size());
  for (const AxisGroup& g : groups) names.push_back(g.rows.front()->model);
  for (Piece piece : pieces) {
    std::set<std::string> values;
    for (const AxisGroup& g : groups) values.insert(piece(*g.rows.front()));
    if (values.size() < 2) continue;
    for (std::size_t k = 0; k < groups.size(); ++k)
      names[k] += ", " + piece(*groups[k].rows.front());
  }
  return names;
}

// The default-variant row of a strategy at axis value x (the speedup chart's ZeRO-3 and ZeRO++).
const ResultView* find_plain(const AxisGroup& g, double x, const std::string& strategy) {
  for (const ResultView* r : g.rows)
    if (r->x_value(g.axis) == x && r->strategy == strategy && r->variant.empty()) return r;
  return nullptr;
}

std::string short_strategy(const ResultView& r) {
  const std::string d = strategy_display(r.strategy);
  const std::string v = r.variant.empty() ? "" : " (" + r.variant + ")";
  if (d == "ZeRO++") return "Z++" + v;
  if (d.starts_with("ZeRO-3")) {
    std::string rest = d.substr(6);
    return (rest.empty() ? "Z3" : rest.substr(3)) + v;  // " + qwZ + hpZ" -> "qwZ + hpZ"
  }
  return d + v;
}

// Over the groups' axis (the groups of one choose_axes axis), one line per group holding both
// ZeRO-3 and ZeRO++; empty string if no group does.
std::string speedup_chart(const std::vector<AxisGroup>& groups) {
  if (groups.empty()) return "";
  const XAxis axis = groups.front().axis;
  ChartSpec c;
  c.title = "Speedup of ZeRO++ over ZeRO-3";
  c.title += versus(axis);
  c.x_label = axis_label(axis);
  c.y_label = "Speedup (x, TFLOPs ratio)";
  std::set<double> all_x;
  for (const auto& g : groups)
    for (double x : g.xs)
      if (find_plain(g, x, "zero3") && find_plain(g, x, "zeropp")) all_x.insert(x);
  if (all_x.empty()) return "";
  for (double x : all_x) c.categories.push_back(x_category(axis, x));
  const std::vector<std::string> names = legend_names(groups);
  std::size_t k = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const AxisGroup& g = groups[i];
    Series s{names[i], strategy_color("zeropp", k), {}};  // ZeRO++'s, a shade per group
    bool any = false;
    for (double x : all_x) {
      const ResultView *a = find_plain(g, x, "zero3"), *b = find_plain(g, x, "zeropp");
      bool ok = a && b && a->tflops_per_gpu > 0;
      s.values.push_back(ok ? b->tflops_per_gpu / a->tflops_per_gpu : kNaN);
      any |= ok;
    }
    if (any) {
      c.series.push_back(std::move(s));
      ++k;
    }
  }
  c.ref_lines.push_back({1.0, "ZeRO-3 = 1x", "#555555"});
  return line_chart(c);
}

std::string breakdown_chart(const AxisGroup& g) {
  ChartSpec c;
  c.title = "Step time: " + g.title;
  c.x_label = "Strategy and network bandwidth per node (Gbps)";
  c.y_label = "Time per step (ms)";
  c.stacked = true;
  // Critical-path attribution (ResultView::step_attribution): the parts add up to the step time,
  // which busy times of overlapping work, such as the quantization kernels, would not.
  const char* colors[] = {"#4C72B0", "#8FAADC", "#55A868", "#64B5CD", "#DD8452",
                          "#937860", "#DA8BC3", "#8C8C8C", "#C44E52", "#B0B0B0"};
  std::vector<Series> ser;
  for (double bw : g.xs)
    for (const ResultView* s : distinct_strategies(g.rows)) {
      const ResultView* r = row_at(g, *s, bw);
      if (!r) continue;
      c.categories.push_back(short_strategy(*r) + "\n" + x_category(XAxis::bandwidth, bw));
      const auto parts = r->step_attribution();
      if (ser.empty())
        for (std::size_t k = 0; k < parts.size(); ++k)
          ser.push_back({parts[k].name, colors[k % std::size(colors)], {}});
      for (std::size_t k = 0; k < parts.size(); ++k)
        ser[k].values.push_back(parts[k].seconds * 1e3);
    }
  // Drop components that are zero everywhere so the legend lists only what is drawn.
  for (auto& s : ser)
    if (std::any_of(s.values.begin(), s.values.end(), [](double v) { return v > 1e-9; }))
      c.series.push_back(s);
  c.width = std::max(760, 72 + 190 + 46 * static_cast<int>(c.categories.size()));
  return bar_chart(c);
}

std::string memory_chart(const std::vector<AxisGroup>& groups) {
  ChartSpec c;
  c.title = "Peak memory per GPU against capacity";
  c.x_label = "Strategy";
  c.y_label = "Peak memory per GPU (GiB)";
  std::vector<const ResultView*> all;
  for (const auto& g : groups) all.insert(all.end(), g.rows.begin(), g.rows.end());
  auto strats = distinct_strategies(all);
  for (const ResultView* s : strats) c.categories.push_back(s->strategy_name());
  std::set<double> capacities;
  const std::vector<std::string> names = legend_names(groups);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const AxisGroup& g = groups[k];
    Series ser{names[k], neutral_color(k), {}};  // experiments, not strategies
    for (const ResultView* s : strats) {
      double peak = kNaN;  // the largest over bandwidths (memory rarely depends on the network)
      for (auto* r : g.rows)
        if (r->strategy_key() == s->strategy_key()) {
          peak = std::isnan(peak) ? r->peak_bytes_per_gpu : std::max(peak, r->peak_bytes_per_gpu);
          if (r->capacity_bytes > 0) capacities.insert(r->capacity_bytes);
        }
      ser.values.push_back(std::isnan(peak) ? kNaN : peak / static_cast<double>(kGiB));
    }
    c.series.push_back(std::move(ser));
  }
  for (double cap : capacities)
    c.ref_lines.push_back({cap / static_cast<double>(kGiB),
                           fmt::format("capacity {}", format_bytes(cap)), "#c0392b"});
  return bar_chart(c);
}

std::string results_table(const std::vector<ResultView>& results) {
  std::string o =
      "<table><thead><tr><th>scenario</th><th>step time</th><th>TFLOPs/GPU (Megatron)</th>"
      "<th>MFU</th><th>HFU</th><th>tokens/s</th>"
      "<th>speedup vs ZeRO-3</th><th>exposed comm</th><th>inter-node bytes</th><th>peak "
      "memory/GPU</th>"
      "<th>fits</th></tr></thead><tbody>\n";
  for (const auto& r : results) {
    const ResultView* base = zero3_baseline(results, r);
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{}</td><td>{}</td><td>{:.0f}</"
        "td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"{}\">{}</td></tr>\n",
        html_escape(r.label()), format_time(r.step_time_s), r.tflops_per_gpu,
        format_utilization(r.mfu), format_utilization(r.hfu), r.tokens_per_s,
        base ? fmt::format("{:.2f}x", r.tflops_per_gpu / base->tflops_per_gpu) : "&ndash;",
        format_time(r.exposed_comm_s()), format_bytes(r.inter_node_bytes),
        format_bytes(r.peak_bytes_per_gpu), r.fits ? "ok" : "bad", r.fits ? "yes" : "no");
  }
  return o + "</tbody></table>\n";
}

// The page's head and style, the title and what the report shows.
std::string page_head(const std::string& source, std::size_t results) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>zerosim report</title>\n<style>\n"
      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px "
      "auto;max-width:1200px;color:#222}\n"
      "h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ddd}\n"
      "figure{margin:16px 0;overflow-x:auto}table{border-collapse:collapse;font-size:13px}\n"
      "td,th{border:1px solid #ccc;padding:3px "
      "8px;text-align:right}td:first-child{text-align:left}\n"
      "td.bad{color:#c0392b;font-weight:bold}.note{color:#555;font-size:13px}\n"
      // A ds_config line is one long word: it wraps at the page's edge instead of running past.
      "code{overflow-wrap:anywhere}\n"
      "</style></head><body>\n";
  o += "<h1>zerosim report</h1>\n";
  o += fmt::format(
      "<p class=\"note\">Source: <code>{}</code>, {} scenario{}. Throughput is the Megatron-LM "
      "model-FLOPs "
      "formula (with activation checkpointing) per GPU; network bandwidth is the sum of the NICs "
      "of one node. "
      "Simulated, not measured.</p>\n",
      html_escape(source), results, results == 1 ? "" : "s");
  return o;
}

// What turns a recommendation on, as a code line ("" without one).
std::string html_config(const std::string& how) {
  return how.empty() ? "" : "<br><code>" + html_escape(how) + "</code>";
}

// Headline: what to use, per experiment and network bandwidth (tables.hpp: recommend).
std::string recommendations_html(const std::vector<ResultView>& results,
                                 const std::vector<AxisGroup>& groups) {
  if (const std::optional<Recommendation> plan = plan_recommendation(results))
    return fmt::format(
               "<h2>Recommended configuration</h2>\n<p class=\"note\">The plan's decision over its "
               "candidates: the fastest that fits in GPU memory, or the fastest of those with "
               "fewer "
               "ZeRO++ techniques within {:.0f}% of it.</p>\n<p><b>{}</b></p>\n",
               100 * kTieFraction, html_escape(plan_recommendation_line(*plan))) +
           html_config(plan->how());
  std::string o = fmt::format(
      "<h2>Recommended configuration</h2>\n<p class=\"note\">Per experiment and network bandwidth: "
      "the fastest configuration that fits in GPU memory, or the fastest of those with fewer "
      "ZeRO++ techniques within {:.0f}% of it.</p>\n",
      100 * kTieFraction);
  for (const auto& g : groups) {
    o += "<h3>" + html_escape(g.title) + "</h3>\n<ul>\n";
    for (const auto& [bw, rec] : recommendations(g.rows))
      o += fmt::format("<li>{} Gbps per node: <b>{}</b>{}</li>\n", x_category(XAxis::bandwidth, bw),
                       html_escape(rec.sentence()), html_config(rec.how()));
    for (const auto& [bw, notes] : notes_by_bandwidth(g.rows))
      for (const std::string& n : notes)
        o += fmt::format("<li class=\"note\">{} Gbps per node: {}</li>\n",
                         x_category(XAxis::bandwidth, bw), html_escape(n));
    o += "</ul>\n";
  }
  return o;
}

// Each result's throughput along the axis that varies (scaling.hpp: choose_axes), and ZeRO++'s
// speedup over ZeRO-3 along each.
std::string throughput_html(const std::vector<ResultView>& results) {
  std::string o;
  const ChosenAxes axes = choose_axes(results);
  const auto figures = [](const std::vector<AxisGroup>& along) {
    std::string out;
    for (const AxisGroup& g : along) out += "<figure>" + throughput_chart(g) + "</figure>\n";
    return out;
  };
  if (!axes.bandwidth.empty())
    o += "<h2>Throughput vs network bandwidth</h2>\n" + figures(axes.bandwidth);
  if (!axes.gpus.empty()) {
    o += "<h2>Scaling with cluster size</h2>\n<p class=\"note\">Whole-cluster throughput and "
         "scaling efficiency (tokens/s per GPU relative to the same strategy on the smallest "
         "cluster of the series; 1 = linear) of results that differ only in their node "
         "count.</p>\n";
    for (const AxisGroup& g : axes.gpus)
      o += "<figure>" + throughput_chart(g) + "</figure>\n<figure>" + scaling_efficiency_chart(g) +
           "</figure>\n";
  }
  if (!axes.tokens_per_gpu.empty())
    o += "<h2>Throughput vs tokens per GPU</h2>\n<p class=\"note\">Results that differ only in "
         "their tokens per GPU (the batch each GPU processes per step).</p>\n" +
         figures(axes.tokens_per_gpu);
  std::string speedups;
  for (const auto* along : {&axes.bandwidth, &axes.gpus, &axes.tokens_per_gpu}) {
    const std::string chart = speedup_chart(*along);
    if (!chart.empty()) speedups += "<figure>" + chart + "</figure>\n";
  }
  if (!speedups.empty()) o += "<h2>Speedup of ZeRO++ over ZeRO-3</h2>\n" + speedups;
  return o;
}

// What the compute stream does or waits on, and the memory per GPU, per experiment.
std::string step_time_html(const std::vector<AxisGroup>& groups) {
  std::string o;
  o += "<h2>Where the step time goes</h2>\n<p class=\"note\">What the compute stream does or waits "
       "on, "
       "adding up to the step time: compute, ZeRO-3's parameter fetch, exposed communication (not "
       "hidden "
       "behind compute), exposed kernels (quantization running while compute waits) and idle time "
       "(waiting on dependencies).</p>\n";
  for (const auto& g : groups) o += "<figure>" + breakdown_chart(g) + "</figure>\n";
  o += "<h2>Memory per GPU</h2>\n<figure>" + memory_chart(groups) + "</figure>\n";
  return o;
}

// One line per distinct warning, with the results that gave it (none: no section).
std::string warnings_html(const std::vector<ResultView>& results) {
  std::string warn;
  for (const WarningGroup& g : group_warnings(results))
    warn += "<li>" + html_escape(g.text) + " <span class=\"note\">(" +
            html_escape(warning_scope(g, results.size())) + ")</span></li>\n";
  return warn.empty() ? "" : "<h2>Warnings</h2>\n<ul>\n" + warn + "</ul>\n";
}

}  // namespace

std::string render_html(const std::vector<ResultView>& results, const std::string& source,
                        const TrainingBudget& budget) {
  const std::vector<AxisGroup> groups = axis_groups(results, XAxis::bandwidth);
  std::string o = page_head(source, results.size());
  o += recommendations_html(results, groups);
  o += throughput_html(results);
  o += step_time_html(groups);
  if (budget.tokens > 0) o += training_time_html(results, budget);
  o += "<h2>All results</h2>\n" + results_table(results);
  o += warnings_html(results);
  o += "</body></html>\n";
  return o;
}

}  // namespace zerosim::report
