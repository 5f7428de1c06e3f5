#include "sim/sweep/runner.hpp"

namespace zerosim::sweep {

ScenarioRunner simulate_runner() {
  return [](const Scenario& s, SimContext& context) { return simulate(s, context); };
}

}  // namespace zerosim::sweep
