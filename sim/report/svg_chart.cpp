#include "sim/report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace zerosim::report {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string palette(std::size_t k) {
  // Colorblind-friendly (Okabe-Ito + Tableau extras).
  static const char* colors[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
                                 "#D55E00", "#F0E442", "#000000", "#8c564b", "#7f7f7f"};
  if (k < std::size(colors)) return colors[k];
  // Then hues a golden angle apart, at one saturation and lightness (HSL 0.55, 0.45).
  const double hue = std::fmod(137.508 * static_cast<double>(k), 360.0) / 60.0;
  const double chroma = (1 - std::fabs(2 * 0.45 - 1)) * 0.55, m = 0.45 - chroma / 2;
  const double x = chroma * (1 - std::fabs(std::fmod(hue, 2.0) - 1));
  const double rgb[6][3] = {{chroma, x, 0}, {x, chroma, 0}, {0, chroma, x},
                            {0, x, chroma}, {x, 0, chroma}, {chroma, 0, x}};
  const double* c = rgb[static_cast<int>(hue) % 6];
  const auto byte = [m](double v) { return static_cast<int>(std::lround(255 * (v + m))); };
  return fmt::format("#{:02X}{:02X}{:02X}", byte(c[0]), byte(c[1]), byte(c[2]));
}

namespace {

struct Frame {
  double left = 72, right = 190, top = 44, bottom = 64;
  double w, h;  // plot area
  double y_max;
  std::vector<double> ticks;
};

// Approximate widths of a character at the legend's (11 px) and the category labels' (10 px) sizes.
constexpr double kLegendChar = 6.2, kCategoryChar = 5.6;

// The legend's room right of the plot: 190 px, more for long series names.
double legend_room(const ChartSpec& spec) {
  std::size_t longest = 0;
  for (const Series& s : spec.series) longest = std::max(longest, s.name.size());
  return std::max(190.0, 40 + kLegendChar * static_cast<double>(longest));
}

// The spec, widened where its legend or its category labels would not fit: each category gets the
// width of its longest label line.
ChartSpec fitted(const ChartSpec& spec) {
  ChartSpec out = spec;
  std::size_t longest = 0;
  for (const std::string& c : spec.categories)
    for (std::size_t start = 0; start <= c.size();) {
      const std::size_t nl = std::min(c.find('\n', start), c.size());
      longest = std::max(longest, nl - start);
      start = nl + 1;
    }
  const double band = kCategoryChar * static_cast<double>(longest) + 8;
  const double plot = band * static_cast<double>(spec.categories.size());
  out.width = std::max(spec.width, static_cast<int>(std::ceil(72 + legend_room(spec) + plot)));
  if (out.width > kMaxChartWidth) {  // vertical labels: their length goes below the plot
    out.width = kMaxChartWidth;
    out.vertical_labels = true;
    out.label_room = static_cast<int>(std::ceil(kCategoryChar * static_cast<double>(longest)));
    out.height += out.label_room;
  }
  return out;
}

// A "nice" axis: ticks at 1, 2 or 5 x 10^k covering [0, max].
Frame make_frame(const ChartSpec& spec, double data_max) {
  Frame f;
  f.right = legend_room(spec);
  f.bottom += spec.label_room;
  f.w = spec.width - f.left - f.right;
  f.h = spec.height - f.top - f.bottom;
  if (!(data_max > 0) || !std::isfinite(data_max)) data_max = 1;
  double raw = data_max / 5;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  f.y_max = std::ceil(data_max / step - 1e-9) * step;
  for (int i = 0; i * step <= f.y_max + step * 1e-9; ++i) f.ticks.push_back(i * step);
  return f;
}

std::string fmt_tick(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-2) return fmt::format("{:.2g}", v);
  return fmt::format("{:g}", std::round(v * 1000) / 1000);
}

std::string open_svg(const ChartSpec& spec, const Frame& f) {
  // A title wider than the chart is set smaller: a bold sans-serif character is about 0.6 em wide.
  const double title_size =
      std::min(14.0, (spec.width - 16) /
                         (0.6 * static_cast<double>(std::max<std::size_t>(1, spec.title.size()))));
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{3}\" y=\"24\" text-anchor=\"middle\" font-size=\"{4:g}\" "
      "font-weight=\"bold\">{2}</text>\n",
      spec.width, spec.height, html_escape(spec.title), spec.width / 2,
      std::floor(title_size * 10) / 10);
  // y grid, ticks and label
  for (double t : f.ticks) {
    double y = f.top + f.h - t / f.y_max * f.h;
    o += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"#e3e3e3\"/>"
        "<text x=\"{3}\" y=\"{4:.2f}\" text-anchor=\"end\" font-size=\"11\">{5}</text>\n",
        f.left, y, f.left + f.w, f.left - 6, y + 4, fmt_tick(t));
  }
  o += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#333\"/>\n",
      f.left, f.top, f.top + f.h, f.left + f.w);
  o += fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 "
      "{0})\">{1}</text>\n",
      f.top + f.h / 2, html_escape(spec.y_label));
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                   f.left + f.w / 2, spec.height - 12, html_escape(spec.x_label));
  return o;
}

// A category's lines, set vertically (read bottom to top), one 12 px column each, centred on x.
std::string vertical_label(const std::string& label, double x, double y) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= label.size();) {
    const std::size_t nl = std::min(label.find('\n', start), label.size());
    lines.push_back(label.substr(start, nl - start));
    start = nl + 1;
  }
  std::string o;
  for (std::size_t j = 0; j < lines.size(); ++j) {
    const double lx =
        x + 12 * (static_cast<double>(j) - (static_cast<double>(lines.size()) - 1) / 2) + 4;
    o += fmt::format(
        "<text x=\"{0:.2f}\" y=\"{1:.2f}\" text-anchor=\"end\" font-size=\"10\" "
        "transform=\"rotate(-90 {0:.2f} {1:.2f})\">{2}</text>\n",
        lx, y, html_escape(lines[j]));
  }
  return o;
}

std::string x_labels(const ChartSpec& spec, const Frame& f) {
  std::string o;
  double band = f.w / std::max<std::size_t>(1, spec.categories.size());
  if (spec.vertical_labels) {
    for (std::size_t i = 0; i < spec.categories.size(); ++i)
      o += vertical_label(spec.categories[i], f.left + band * (static_cast<double>(i) + 0.5),
                          f.top + f.h + 8);
    return o;
  }
  for (std::size_t i = 0; i < spec.categories.size(); ++i) {
    // A category label may have several lines separated by '\n'.
    std::string label = spec.categories[i], spans;
    double x = f.left + band * (i + 0.5);
    std::size_t line = 0, start = 0;
    while (true) {
      auto nl = label.find('\n', start);
      spans += fmt::format("<tspan x=\"{:.2f}\" dy=\"{}\">{}</tspan>", x, line == 0 ? 0 : 12,
                           html_escape(label.substr(
                               start, nl == std::string::npos ? std::string::npos : nl - start)));
      ++line;
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    o += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n", x,
        f.top + f.h + 15, spans);
  }
  return o;
}

std::string legend_and_refs(const ChartSpec& spec, const Frame& f, bool lines) {
  std::string o;
  for (const auto& r : spec.ref_lines) {
    if (!(r.value >= 0) || r.value > f.y_max) continue;
    double y = f.top + f.h - r.value / f.y_max * f.h;
    o += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"{3}\" "
        "stroke-width=\"2\" "
        "stroke-dasharray=\"6 4\"/><text x=\"{2}\" y=\"{4:.2f}\" text-anchor=\"end\" "
        "font-size=\"11\" "
        "fill=\"{3}\">{5}</text>\n",
        f.left, y, f.left + f.w, html_escape(r.color), y - 4, html_escape(r.label));
  }
  double lx = f.left + f.w + 14, ly = f.top + 4;
  for (std::size_t k = 0; k < spec.series.size(); ++k) {
    const auto& s = spec.series[k];
    double y = ly + 18.0 * static_cast<double>(k);
    if (lines)
      o += fmt::format(
          "<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"{3}\" "
          "stroke-width=\"3\"/>",
          lx, y + 6, lx + 14, html_escape(s.color));
    else
      o += fmt::format("<rect x=\"{}\" y=\"{:.2f}\" width=\"12\" height=\"12\" fill=\"{}\"/>", lx,
                       y, html_escape(s.color));
    o += fmt::format("<text x=\"{}\" y=\"{:.2f}\" font-size=\"11\">{}</text>\n", lx + 18, y + 10,
                     html_escape(s.name));
  }
  return o;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

std::string bar_chart(const ChartSpec& unfitted) {
  const ChartSpec spec = fitted(unfitted);
  double max = 0;
  for (std::size_t i = 0; i < spec.categories.size(); ++i) {
    double stack = 0;
    for (const auto& s : spec.series) {
      double v = i < s.values.size() ? finite_or_zero(s.values[i]) : 0;
      if (spec.stacked)
        stack += std::max(0.0, v);
      else
        max = std::max(max, v);
    }
    max = std::max(max, stack);
  }
  for (const auto& r : spec.ref_lines) max = std::max(max, r.value * 1.05);
  Frame f = make_frame(spec, max);
  std::string o = open_svg(spec, f);
  double band = f.w / std::max<std::size_t>(1, spec.categories.size());
  std::size_t ns = std::max<std::size_t>(1, spec.series.size());
  double bar_w = spec.stacked ? band * 0.6 : band * 0.8 / static_cast<double>(ns);
  for (std::size_t i = 0; i < spec.categories.size(); ++i) {
    double base = 0;
    for (std::size_t k = 0; k < spec.series.size(); ++k) {
      const auto& s = spec.series[k];
      double v = i < s.values.size() ? s.values[i] : NAN;
      if (!std::isfinite(v) || v <= 0) continue;
      double x = spec.stacked ? f.left + band * i + band * 0.2
                              : f.left + band * i + band * 0.1 + bar_w * k;
      double y0 = base, y1 = spec.stacked ? base + v : v;
      double py1 = f.top + f.h - y1 / f.y_max * f.h, py0 = f.top + f.h - y0 / f.y_max * f.h;
      o += fmt::format(
          "<rect class=\"data\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
          "fill=\"{}\">"
          "<title>{}: {}: {}</title></rect>\n",
          x, py1, bar_w, std::max(0.5, py0 - py1), html_escape(s.color),
          html_escape(spec.categories[i]), html_escape(s.name), fmt_tick(v));
      if (spec.stacked) base += v;
    }
  }
  o += x_labels(spec, f) + legend_and_refs(spec, f, false) + "</svg>\n";
  return o;
}

std::string line_chart(const ChartSpec& unfitted) {
  const ChartSpec spec = fitted(unfitted);
  double max = 0;
  for (const auto& s : spec.series)
    for (double v : s.values) max = std::max(max, finite_or_zero(v));
  for (const auto& r : spec.ref_lines) max = std::max(max, r.value * 1.05);
  Frame f = make_frame(spec, max * 1.05);
  std::string o = open_svg(spec, f);
  double band = f.w / std::max<std::size_t>(1, spec.categories.size());
  for (const auto& s : spec.series) {
    std::string path;
    std::string dots;
    for (std::size_t i = 0; i < s.values.size() && i < spec.categories.size(); ++i) {
      double v = s.values[i];
      if (!std::isfinite(v)) continue;
      double x = f.left + band * (i + 0.5), y = f.top + f.h - v / f.y_max * f.h;
      path += fmt::format("{}{:.2f},{:.2f}", path.empty() ? "M" : " L", x, y);
      dots += fmt::format(
          "<circle class=\"data\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"4\" fill=\"{}\"><title>{}: {}: "
          "{}</title></circle>\n",
          x, y, html_escape(s.color), html_escape(spec.categories[i]), html_escape(s.name),
          fmt_tick(v));
    }
    if (!path.empty())
      o += fmt::format(
          "<path class=\"data\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"/>\n",
          path, html_escape(s.color));
    o += dots;
  }
  o += x_labels(spec, f) + legend_and_refs(spec, f, true) + "</svg>\n";
  return o;
}

}  // namespace zerosim::report
