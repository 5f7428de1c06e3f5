// Every scenario of a real sweep is drawn and listed once, told apart from the others: in the HTML
// report each scenario is exactly one mark (bar or point) of the throughput charts and one bar of
// the step-time charts, each with a label no other mark of the report has; every chart's legend
// names differ; the HTML and Markdown tables and the CSV have one row per scenario with distinct
// labels. Checked on a fabric x oversubscription sweep, a nodes sweep (1-64 nodes), a bit-width
// and hpZ-size sweep and a tokens-per-GPU sweep; and shown to fail when two strategies collapse to
// one label or two fabrics to one.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "real_sweeps.hpp"
#include "sim/report/html.hpp"
#include "sim/report/tables.hpp"

using namespace zerosim;
using namespace zerosim::report;

namespace {

// The texts between each `open` and the next `close` of `text`.
std::vector<std::string> between(const std::string& text, const std::string& open,
                                 const std::string& close) {
  std::vector<std::string> out;
  for (std::size_t p = text.find(open); p != std::string::npos; p = text.find(open, p)) {
    p += open.size();
    const std::size_t end = text.find(close, p);
    if (end == std::string::npos) break;
    out.push_back(text.substr(p, end - p));
    p = end + close.size();
  }
  return out;
}

std::string svg_title(const std::string& svg) {
  const std::vector<std::string> t = between(svg, "aria-label=\"", "\"");
  return t.empty() ? "" : t.front();
}

// The labels of a chart's data marks: "category: series" (their tooltip without the value).
std::vector<std::string> mark_labels(const std::string& svg) {
  std::vector<std::string> out;
  for (const std::string& mark : between(svg, "class=\"data\"", ">\n")) {
    const std::vector<std::string> title = between(mark, "<title>", "</title>");
    if (title.empty()) continue;  // a line's path: its points are the marks
    out.push_back(title.front().substr(0, title.front().rfind(": ")));
  }
  return out;
}

// Legend entries: the only texts of a chart at font size 11 without an anchor.
std::vector<std::string> legend(const std::string& svg) {
  std::vector<std::string> out;
  for (const std::string& text : between(svg, "<text x=\"", "</text>")) {
    const std::size_t p = text.find("\" font-size=\"11\">");
    if (p != std::string::npos && text.find("text-anchor") == std::string::npos)
      out.push_back(text.substr(p + 17));
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Tally {
  std::vector<std::string> problems;
  void distinct(const std::string& what, const std::vector<std::string>& labels) {
    const std::set<std::string> set(labels.begin(), labels.end());
    if (set.size() != labels.size())
      problems.push_back(what + ": " + std::to_string(labels.size() - set.size()) +
                         " repeated labels");
  }
  // One label per scenario, no two alike.
  void one_each(const std::string& what, const std::vector<std::string>& labels, std::size_t n) {
    if (labels.size() != n)
      problems.push_back(what + ": " + std::to_string(labels.size()) + " for " + std::to_string(n) +
                         " scenarios");
    distinct(what, labels);
  }
};

// What a report of `results` fails to show distinctly (empty: every scenario is shown once).
std::vector<std::string> marks_problems(const std::vector<ResultView>& results) {
  const std::size_t n = results.size();
  Tally t;
  const std::string html = render_html(results, "sweep.json");
  std::vector<std::string> throughput, steps;
  for (const std::string& svg : between(html, "<svg", "</svg>")) {
    const std::string title = svg_title(svg);
    t.distinct("legend of \"" + title + "\"", legend(svg));
    const std::string chart = title + " | ";
    if (title.starts_with("Throughput"))
      for (const std::string& m : mark_labels(svg)) throughput.push_back(chart + m);
    if (title.starts_with("Step time")) {
      // A stacked bar is one mark per part; its category is the scenario.
      std::set<std::string> bars;
      for (const std::string& m : mark_labels(svg)) bars.insert(chart + m.substr(0, m.rfind(": ")));
      steps.insert(steps.end(), bars.begin(), bars.end());
    }
  }
  t.one_each("throughput marks", throughput, n);
  t.one_each("step-time bars", steps, n);
  const std::size_t table = html.find("<h2>All results</h2>");
  t.one_each("HTML result rows",
             table == std::string::npos ? std::vector<std::string>{}
                                        : between(html.substr(table), "<tr><td>", "</td>"),
             n);

  // Markdown: the rows of each experiment's table (network and strategy), under its heading.
  std::vector<std::string> md_rows;
  std::string heading;
  for (const std::string& line : lines(render_markdown(results, "sweep.json"))) {
    if (line.starts_with("## ")) heading = line;
    if (heading.starts_with("## Scaling") || !line.starts_with("| ") ||
        line.starts_with("| network per node"))
      continue;
    md_rows.push_back(heading + " | " + line.substr(0, line.find(" | ", line.find(" | ") + 3)));
  }
  t.one_each("Markdown rows", md_rows, n);

  // CSV: the scenario columns (those before step_time_s) of each row.
  const std::string csv = render_csv(results);
  const std::size_t scenario_columns =
      std::count(csv.begin(), csv.begin() + static_cast<long>(csv.find("step_time_s")), ',');
  std::vector<std::string> csv_rows;
  const std::vector<std::string> csv_lines = lines(csv);
  for (std::size_t i = 1; i < csv_lines.size(); ++i) {
    const std::string& line = csv_lines[i];
    std::size_t p = 0;
    for (std::size_t k = 0; k < scenario_columns && p != std::string::npos; ++k)
      p = line.find(',', p + 1);
    csv_rows.push_back(line.substr(0, p));
  }
  t.one_each("CSV rows", csv_rows, n);
  return t.problems;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A sweep of n scenarios: each shown distinctly, its throughput drawn in section `drawn_in` and
// none in `not_in` (when given).
void check_sweep(const std::vector<ResultView>& results, std::size_t n, const std::string& drawn_in,
                 const std::string& not_in = "") {
  REQUIRE(results.size() == n);
  for (const std::string& p : marks_problems(results)) FAIL_CHECK(p);
  // No two scenarios share a label (the tables' and the time-to-train section's row names).
  std::set<std::string> labels;
  for (const ResultView& r : results) labels.insert(r.label());
  CHECK(labels.size() == n);
  const std::string html = render_html(results, "sweep.json");
  CHECK(has(html, "<h2>" + drawn_in + "</h2>"));
  if (!not_in.empty()) CHECK_FALSE(has(html, "<h2>" + not_in + "</h2>"));
}

}  // namespace

TEST_CASE("a fabric x oversubscription sweep draws every scenario distinctly") {
  check_sweep(testing::fabric_sweep(), 32, "Throughput vs network bandwidth");
}

TEST_CASE("a nodes sweep (1-64 nodes) draws every scenario distinctly, against GPUs") {
  check_sweep(testing::nodes_sweep(), 14, "Scaling with cluster size",
              "Throughput vs network bandwidth");
}

TEST_CASE("a bit-width and hpZ-size sweep draws every scenario distinctly") {
  check_sweep(testing::bit_width_sweep(), 13, "Throughput vs network bandwidth");
}

TEST_CASE("a tokens-per-GPU sweep draws every scenario distinctly, against tokens per GPU") {
  check_sweep(testing::tokens_sweep(), 12, "Throughput vs tokens per GPU",
              "Throughput vs network bandwidth");
}

TEST_CASE("the count fails when scenarios collapse to one label") {
  // Two strategies' variants dropped: the bit-width runs of one strategy look alike.
  std::vector<ResultView> rs = testing::bit_width_sweep();
  for (ResultView& r : rs) r.variant.clear();
  CHECK_FALSE(marks_problems(rs).empty());
  // The fabric and oversubscription dropped: the fabric sweep's experiments look alike.
  rs = testing::fabric_sweep();
  for (ResultView& r : rs) {
    r.fabric = "rail";
    r.oversubscription = 1;
  }
  CHECK_FALSE(marks_problems(rs).empty());
}
