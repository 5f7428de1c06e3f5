// Time to train: a token budget (e.g. 300B, 2T) at a result's simulated throughput, in days of
// wall-clock time and GPU-hours. The whole run is taken at the simulated step's speed: no warm-up,
// evaluation, checkpoint writes or failures, so these are lower bounds of a real run.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

// A token count: digits with an optional decimal suffix K, M, B (billion) or T, e.g. 300B, 1.5T,
// 2e12. InputError naming `flag` unless positive, finite and at most 1e16.
double parse_token_count(std::string_view text, const std::string& flag);

// What a report prices: a token budget and, optionally, the price of one GPU-hour.
struct TrainingBudget {
  double tokens = 0;          // 0: no time-to-train section
  double gpu_hour_price = 0;  // 0: no cost column
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
