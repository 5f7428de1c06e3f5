#include "sim/sweep/runner.hpp"

namespace zerosim::sweep {

ScenarioRunner simulate_runner() {
  return [](const Scenario& s) { return simulate(s, ""); };
}

}  // namespace zerosim::sweep
