// Placeholder registration for 'topology'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_topology(CLI::App& app) { app.add_subcommand("topology", "(not yet implemented)"); }

}  // namespace zerosim::cli
