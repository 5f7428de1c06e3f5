// The one place where sweeps and the planner call the simulator: a ScenarioRunner maps a scenario to
// its StepResult. Production code uses simulate_runner(); tests inject fakes to check the machinery.
#pragma once
#include <functional>

#include "sim/step/simulate.hpp"

namespace zerosim::sweep {

using ScenarioRunner = std::function<StepResult(const Scenario&)>;

// Calls zerosim::simulate(scenario) without a trace.
ScenarioRunner simulate_runner();

}  // namespace zerosim::sweep
