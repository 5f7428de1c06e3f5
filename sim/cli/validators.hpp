// Shared CLI11 validators. CLI::Range lets NaN through (every comparison with NaN is false), so
// every floating-point flag is checked with finite_range: a finite number within [min, max].
// A scenario flag is checked by its entry of the scenario schema (sim/step/scenario_schema.hpp),
// the same rule and message as `sweep`'s lists and the Python module's keywords.
#pragma once
#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <type_traits>

#include "sim/step/scenario_schema.hpp"

namespace zerosim::cli {

CLI::Validator finite_range(double min, double max);
// An integer flag within [min, max] ("must be at least 1, not '0'"): CLI::PositiveNumber and
// CLI::Range state their bounds as doubles (a 309-digit number) and let "nan" through.
CLI::Validator int_range(long long min, long long max = std::numeric_limits<int>::max());
CLI::Validator scenario_validator(const ScenarioParam& p);

// Adds p's flag to `app` with the schema's help, type name and rule, storing into `target`
// (required where the schema says so).
// An enum's flag stores the value its name parses to (choice.hpp; the rule has checked the name).
template <typename T>
CLI::Option* add_scenario_option(CLI::App* app, const ScenarioParam& p, T& target) {
  CLI::Option* option = nullptr;
  if constexpr (std::is_enum_v<T>)
    option = app->add_option_function<std::string>(
        p.flag, [&target](const std::string& name) { target = *parse_choice<T>(name); },
        scenario_param_help(p, p.required));
  else
    option = app->add_option(p.flag, target, scenario_param_help(p, p.required));
  return option->required(p.required)
      ->type_name(scenario_param_type(p))
      ->check(scenario_validator(p));
}

// The schema's entry of `flag` (std::logic_error if the table has none: a programming error).
const ScenarioParam& scenario_param(const std::string& flag);

}  // namespace zerosim::cli
