#include "sim/report/training_time.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "sim/core/error.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/report/tables.hpp"

namespace zerosim::report {

double parse_token_count(std::string_view text, const std::string& flag) {
  const std::string s(text);
  const auto bad = [&](const std::string& why) {
    return flag_error(
        flag, fmt::format("'{}' is not a token count ({}); use e.g. 300B, 1.5T, 2e12", s, why));
  };
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
    throw bad("it must start with digits");
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  const std::string suffix(end);
  if (suffix == "K" || suffix == "k")
    value *= 1e3;
  else if (suffix == "M")
    value *= 1e6;
  else if (suffix == "B" || suffix == "G")
    value *= 1e9;
  else if (suffix == "T")
    value *= 1e12;
  else if (!suffix.empty())
    throw bad("unknown suffix '" + suffix + "' (K, M, B, T)");
  if (!std::isfinite(value) || !(value > 0)) throw bad("it must be positive and finite");
  if (value > 1e16) throw bad("more than 1e16 tokens");
  return value;
}

TrainingTime training_time(const ResultView& r, double tokens) {
  TrainingTime t;
  if (!(r.tokens_per_s > 0)) return t;
  const double seconds = tokens / r.tokens_per_s;
  t.days = seconds / 86400;
  t.gpu_hours = seconds / 3600 * r.gpus;
  return t;
}

std::string format_token_count(double tokens) {
  const struct {
    double scale;
    const char* suffix;
  } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& u : units)
    if (tokens >= u.scale) return fmt::format("{:g}{}", tokens / u.scale, u.suffix);
  return fmt::format("{:g}", tokens);
}

namespace {

std::string intro(double tokens) {
  return fmt::format(
      "Training on {} tokens at each result's simulated throughput: wall-clock days and "
      "GPU-hours (the whole run at the step's speed; no warm-up, evaluation, checkpointing or "
      "failures, so real runs take longer).",
      format_token_count(tokens));
}

}  // namespace

std::string training_time_markdown(const std::vector<ResultView>& results,
                                   const TrainingBudget& budget) {
  const bool priced = budget.gpu_hour_price > 0;
  std::string out = "## Time to train\n\n" + intro(budget.tokens) + "\n\n";
  out += priced ? fmt::format(
                      "| scenario | tokens/s | days | GPU-hours | cost at {:g} per GPU-hour |\n"
                      "|---|---:|---:|---:|---:|\n",
                      budget.gpu_hour_price)
                : "| scenario | tokens/s | days | GPU-hours |\n|---|---:|---:|---:|\n";
  for (const ResultView& r : results) {
    const TrainingTime t = training_time(r, budget.tokens);
    out += fmt::format("| {} | {:.0f} | {:.1f} | {:.0f} |", md_cell(r.label()), r.tokens_per_s,
                       t.days, t.gpu_hours);
    out += priced ? fmt::format(" {:.0f} |\n", t.gpu_hours * budget.gpu_hour_price) : "\n";
  }
  return out + "\n";
}

std::string training_time_html(const std::vector<ResultView>& results,
                               const TrainingBudget& budget) {
  const bool priced = budget.gpu_hour_price > 0;
  std::string out = "<h2>Time to train</h2>\n<p class=\"note\">" +
                    html_escape(intro(budget.tokens)) +
                    "</p>\n<table><thead><tr><th>scenario</th><th>tokens/s</th><th>days</th>"
                    "<th>GPU-hours</th>";
  if (priced) out += fmt::format("<th>cost at {:g} per GPU-hour</th>", budget.gpu_hour_price);
  out += "</tr></thead><tbody>\n";
  for (const ResultView& r : results) {
    const TrainingTime t = training_time(r, budget.tokens);
    out += fmt::format("<tr><td>{}</td><td>{:.0f}</td><td>{:.1f}</td><td>{:.0f}</td>",
                       html_escape(r.label()), r.tokens_per_s, t.days, t.gpu_hours);
    if (priced) out += fmt::format("<td>{:.0f}</td>", t.gpu_hours * budget.gpu_hour_price);
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace zerosim::report
