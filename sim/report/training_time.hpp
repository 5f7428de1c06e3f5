// Time to train: a token budget (e.g. 300B, 2T) at a result's simulated throughput, in days of
// wall-clock time and GPU-hours. The whole run is taken at the simulated step's speed: no warm-up,
// evaluation, checkpoint writes or failures, so these are lower bounds of a real run.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

// A token count: digits with an optional decimal suffix K, M, B (billion) or T, e.g. 300B, 1.5T,
// 2e12. InputError naming `flag` unless positive, finite and at most 1e16.
double parse_token_count(std::string_view text, const std::string& flag);

// The price of one GPU-hour: one for every GPU, or one per GPU type, matched case-insensitively
// as a part of the result's GPU model ("h100" prices "H100-SXM5-80GB"; the first match wins).
struct GpuPrices {
  double every = 0;  // > 0: the price of every GPU
  std::vector<std::pair<std::string, double>> per_type;
  bool any() const { return every > 0 || !per_type.empty(); }
  // The price of a GPU model and the type that gave it ("" for `every`); price 0 when none does.
  std::pair<double, std::string> of(const std::string& gpu_model) const;
};
// --gpu-hour-price: "2" (every GPU) or "h100=4,a100=2" (per GPU type). InputError naming `flag`,
// the value and the rule: each price finite in [1e-6, 1e6], each type named once.
GpuPrices parse_gpu_prices(std::string_view text, const std::string& flag);

// What a report prices: a token budget and, optionally, the price of one GPU-hour.
struct TrainingBudget {
  double tokens = 0;  // 0: no time-to-train section
  GpuPrices prices;   // none: no cost column
};

struct TrainingTime {
  double days = 0, gpu_hours = 0;
};
TrainingTime training_time(const ResultView& r, double tokens);

// "300B" style: the budget as a short decimal string.
std::string format_token_count(double tokens);
// Markdown and HTML sections: per result, days and GPU-hours for the budget (and the cost when it
// has a price).
std::string training_time_markdown(const std::vector<ResultView>& results,
                                   const TrainingBudget& budget);
std::string training_time_html(const std::vector<ResultView>& results,
                               const TrainingBudget& budget);

}  // namespace zerosim::report
