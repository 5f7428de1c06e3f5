// Shared CLI11 validators. CLI::Range lets NaN through (every comparison with NaN is false), so
// every floating-point flag is checked with finite_range: a finite number within [min, max].
#pragma once
#include <CLI/CLI.hpp>

namespace zerosim::cli {

CLI::Validator finite_range(double min, double max);

}  // namespace zerosim::cli
