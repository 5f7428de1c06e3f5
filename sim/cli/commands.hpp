// The zerosim subcommands. Each lives in its own cmd_<name>.cpp and registers itself on the app;
// callbacks throw InputError for bad input and main() maps exceptions to exit codes (2 bad input, 1
// other).
#pragma once
#include <CLI/CLI.hpp>

namespace zerosim::cli {

void register_simulate(CLI::App& app);
void register_collective(CLI::App& app);
void register_sweep(CLI::App& app);
void register_plan(CLI::App& app);
void register_report(CLI::App& app);  // report and compare
void register_topology(CLI::App& app);
void register_calibrate(CLI::App& app);

}  // namespace zerosim::cli
