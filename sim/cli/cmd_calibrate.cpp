// Placeholder registration for 'calibrate'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_calibrate(CLI::App& app) { app.add_subcommand("calibrate", "(not yet implemented)"); }

}  // namespace zerosim::cli
