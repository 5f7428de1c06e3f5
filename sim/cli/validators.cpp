#include "sim/cli/validators.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace zerosim::cli {

CLI::Validator finite_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& input) { return finite_range_rule(min, max, input); },
      fmt::format("FINITE in [{:g} - {:g}]", min, max));
}

CLI::Validator int_range(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& input) {
        return int_range_rule(static_cast<double>(min), static_cast<double>(max), input);
      },
      max == std::numeric_limits<int>::max() ? fmt::format("INT >= {}", min)
                                             : fmt::format("INT in [{} - {}]", min, max));
}

CLI::Validator scenario_validator(const ScenarioParam& p) {
  return CLI::Validator([&p](std::string& input) { return scenario_param_rule(p, input); },
                        scenario_param_range(p));
}

const ScenarioParam& scenario_param(const std::string& flag) {
  const ScenarioParam* p = find_scenario_param(flag);
  if (!p) throw std::logic_error("no scenario schema entry for " + flag);
  return *p;
}

}  // namespace zerosim::cli
