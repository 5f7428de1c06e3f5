// Placeholder registration for 'sweep'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_sweep(CLI::App& app) { app.add_subcommand("sweep", "(not yet implemented)"); }

}  // namespace zerosim::cli
