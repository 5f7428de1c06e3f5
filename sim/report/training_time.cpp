#include "sim/report/training_time.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

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

std::pair<double, std::string> GpuPrices::of(const std::string& gpu_model) const {
  std::string model = gpu_model;
  for (char& c : model) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [type, price] : per_type)
    if (!type.empty() && model.find(type) != std::string::npos) return {price, type};
  return {every, ""};
}

GpuPrices parse_gpu_prices(std::string_view text, const std::string& flag) {
  const auto price = [&](const std::string& item, const std::string& value) {
    char* end = nullptr;
    const double v = value.empty() ? 0 : std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 1e-6 || v > 1e6)
      throw flag_error(flag, fmt::format("a price must be a finite number, not '{}', in [1e-06, "
                                         "1e+06]; give PRICE or TYPE=PRICE,... (h100=4,a100=2)",
                                         item));
    return v;
  };
  GpuPrices out;
  const std::string all(text);
  if (all.find('=') == std::string::npos) {
    out.every = price(all, all);
    return out;
  }
  for (std::size_t start = 0; start <= all.size();) {
    const std::size_t comma = std::min(all.find(',', start), all.size());
    const std::string item = all.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw flag_error(flag, fmt::format("'{}' is not TYPE=PRICE (h100=4,a100=2)", item));
    std::string type = item.substr(0, eq);
    for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& [known, p] : out.per_type)
      if (known == type) throw flag_error(flag, fmt::format("GPU type '{}' priced twice", type));
    out.per_type.emplace_back(type, price(item, item.substr(eq + 1)));
    start = comma + 1;
  }
  return out;
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

// A result's price per GPU-hour and its cost, as cells ("4 (h100)", "1234"); "-" where no price
// names its GPU.
std::pair<std::string, std::string> cost_cells(const ResultView& r, const TrainingTime& t,
                                               const GpuPrices& prices) {
  const auto [price, type] = prices.of(r.gpu_model);
  if (!(price > 0)) return {"no price for " + r.gpu_model, "-"};
  return {fmt::format("{:g} ({})", price, type.empty() ? "every GPU" : type),
          fmt::format("{:.0f}", t.gpu_hours * price)};
}

}  // namespace

std::string training_time_markdown(const std::vector<ResultView>& results,
                                   const TrainingBudget& budget) {
  const bool priced = budget.prices.any();
  std::string out = "## Time to train\n\n" + intro(budget.tokens) + "\n\n";
  out += priced ? "| scenario | GPU | tokens/s | days | GPU-hours | price per GPU-hour | cost |\n"
                  "|---|---|---:|---:|---:|---|---:|\n"
                : "| scenario | GPU | tokens/s | days | GPU-hours |\n|---|---|---:|---:|---:|\n";
  for (const ResultView& r : results) {
    const TrainingTime t = training_time(r, budget.tokens);
    out += fmt::format("| {} | {} | {:.0f} | {:.1f} | {:.0f} |", md_cell(r.label()),
                       md_cell(r.gpu_model), r.tokens_per_s, t.days, t.gpu_hours);
    if (priced) {
      const auto [price, cost] = cost_cells(r, t, budget.prices);
      out += fmt::format(" {} | {} |", md_cell(price), cost);
    }
    out += "\n";
  }
  return out + "\n";
}

std::string training_time_html(const std::vector<ResultView>& results,
                               const TrainingBudget& budget) {
  const bool priced = budget.prices.any();
  std::string out = "<h2>Time to train</h2>\n<p class=\"note\">" +
                    html_escape(intro(budget.tokens)) +
                    "</p>\n<table><thead><tr><th>scenario</th><th>GPU</th><th>tokens/s</th>"
                    "<th>days</th><th>GPU-hours</th>";
  if (priced) out += "<th>price per GPU-hour</th><th>cost</th>";
  out += "</tr></thead><tbody>\n";
  for (const ResultView& r : results) {
    const TrainingTime t = training_time(r, budget.tokens);
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.0f}</td><td>{:.1f}</td><td>{:.0f}</td>",
                       html_escape(r.label()), html_escape(r.gpu_model), r.tokens_per_s, t.days,
                       t.gpu_hours);
    if (priced) {
      const auto [price, cost] = cost_cells(r, t, budget.prices);
      out += fmt::format("<td>{}</td><td>{}</td>", html_escape(price), cost);
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace zerosim::report
