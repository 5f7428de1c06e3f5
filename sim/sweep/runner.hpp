// The one place where sweeps and the planner call the simulator: a ScenarioRunner maps a scenario
// to its StepResult, given the calling worker thread's SimContext. Production code uses
// simulate_runner(); tests inject fakes to check the machinery.
#pragma once
#include <functional>

#include "sim/step/simulate.hpp"

namespace zerosim::sweep {

using ScenarioRunner = std::function<StepResult(const Scenario&, SimContext&)>;

// Calls zerosim::simulate(scenario, context) without a trace.
ScenarioRunner simulate_runner();

}  // namespace zerosim::sweep
