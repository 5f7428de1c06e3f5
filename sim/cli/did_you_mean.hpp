// Did-you-mean for a command line CLI11 refused: each argument it did not expect is matched
// against the names it could have been (sim/core/closest_match.hpp): a subcommand when none was
// chosen
// (`zerosim simulat`), else a flag of the chosen subcommand (`simulate --stratgy`).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace zerosim::cli {

// "; did you mean 'simulate'?" (one such clause per unexpected argument with a close name), or
// "" when none has one. `app` is the app whose parse threw.
std::string parse_error_hint(const CLI::App& app);

}  // namespace zerosim::cli
