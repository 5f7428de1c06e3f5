// Inline SVG charts for the HTML report: grouped or stacked bar charts and line charts over
// categorical x values, with a title, axes with units, tick labels, a legend and optional reference
// lines. Every data mark carries class="data" so tests can check that a chart is not empty. All
// text is XML-escaped.
#pragma once
#include <string>
#include <vector>

namespace zerosim::report {

// Escapes & < > " ' for HTML/SVG text and attributes.
std::string html_escape(const std::string& text);

struct Series {
  std::string name;
  std::string color;           // CSS color
  std::vector<double> values;  // one per category; NaN = no value
};

struct RefLine {
  double value = 0;
  std::string label;
  std::string color = "#c0392b";
};

struct ChartSpec {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<Series> series;
  std::vector<RefLine> ref_lines;
  bool stacked = false;  // bars: stack series instead of grouping them
  int width = 760, height = 380;
  // Set by the renderers: category labels set vertically below the axis, and the height they add.
  bool vertical_labels = false;
  int label_room = 0;
};

// The widest chart: it fits a 1400 px page with its margins.
constexpr int kMaxChartWidth = 1360;

// Charts wider than spec.width where the legend or the category labels need the room, up to
// kMaxChartWidth: past it the category labels are set vertically, one 12 px column per line, and
// the chart grows in height instead.
std::string bar_chart(const ChartSpec& spec);
std::string line_chart(const ChartSpec& spec);

// A distinct color for series k: a fixed palette of 10, then hues a golden angle apart.
std::string palette(std::size_t k);

}  // namespace zerosim::report
