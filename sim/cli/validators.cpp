#include "sim/cli/validators.hpp"

#include <fmt/format.h>

#include <cmath>

namespace zerosim::cli {

CLI::Validator finite_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v)) return fmt::format("'{}' is not a number", input);
        if (!std::isfinite(v)) return fmt::format("must be a finite number, not '{}'", input);
        if (v < min || v > max)
          return fmt::format("must be between {:g} and {:g}, not '{}'", min, max, input);
        return {};
      },
      fmt::format("FINITE in [{:g} - {:g}]", min, max));
}

}  // namespace zerosim::cli
