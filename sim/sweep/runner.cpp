#include "sim/sweep/runner.hpp"

#include <stdexcept>

namespace zerosim {
// Weak until sim/step/simulate.cpp lands, so the CLI links meanwhile (a weak undefined symbol is null).
// TODO(report): drop this redeclaration once simulate() is defined in the library.
[[gnu::weak]] json simulate(const Scenario& scenario, const std::string& trace_path);
}  // namespace zerosim

namespace zerosim::sweep {

ScenarioRunner simulate_runner() {
  return [](const Scenario& s) {
    if (&zerosim::simulate == nullptr) throw std::runtime_error("the simulator (sim/step/simulate.cpp) is not built yet");
    return simulate(s, "");
  };
}

}  // namespace zerosim::sweep
