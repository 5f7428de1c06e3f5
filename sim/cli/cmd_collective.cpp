// Placeholder registration for 'collective'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_collective(CLI::App& app) { app.add_subcommand("collective", "(not yet implemented)"); }

}  // namespace zerosim::cli
