// Placeholder registration for 'simulate'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_simulate(CLI::App& app) { app.add_subcommand("simulate", "(not yet implemented)"); }

}  // namespace zerosim::cli
