#include "sim/cli/commands.hpp"

#include <atomic>

namespace zerosim::cli {

namespace {

std::atomic<bool>& validation_only() {
  static std::atomic<bool> on{false};
  return on;
}

}  // namespace

void register_commands(CLI::App& app) {
  register_simulate(app);
  register_collective(app);
  register_sweep(app);
  register_plan(app);
  register_report(app);
  register_topology(app);
  register_calibrate(app);
}

void set_validation_only(bool on) { validation_only() = on; }

void begin_work() {
  if (validation_only()) throw ValidationDone{};
}

}  // namespace zerosim::cli
