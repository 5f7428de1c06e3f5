// Placeholder registration for 'report'; replaced by its real implementation.
#include "sim/cli/commands.hpp"

namespace zerosim::cli {

void register_report(CLI::App& app) { app.add_subcommand("report", "(not yet implemented)"); }

}  // namespace zerosim::cli
