// The zerosim subcommands. Each lives in its own cmd_<name>.cpp and registers itself on the app;
// callbacks throw InputError for bad input and main() maps exceptions to exit codes (2 bad input, 1
// other). Each callback checks all its flags first and calls begin_work() where its work (loading
// files, simulating, writing) starts, so that the flag fuzz target (fuzz/fuzz_cli.cpp) can run
// parsing and validation alone.
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

// Every subcommand above, on `app`.
void register_commands(CLI::App& app);

// Thrown by begin_work() in validation-only mode: the command's flags passed every check.
struct ValidationDone {};

// Validation-only mode: commands stop at begin_work() (off by default; the flag fuzz target turns
// it on).
void set_validation_only(bool on);

// Marks the end of a command's flag checks; throws ValidationDone in validation-only mode.
void begin_work();

}  // namespace zerosim::cli
