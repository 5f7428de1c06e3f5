// Placeholder registration for 'plan'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_plan(CLI::App& app) { app.add_subcommand("plan", "(not yet implemented)"); }

}  // namespace zerosim::cli
