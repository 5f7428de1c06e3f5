// The one place where sweeps and the planner call the simulator: a ScenarioRunner maps a scenario to
// its result JSON. Production code uses simulate_runner(); tests inject fakes to check the machinery.
#pragma once
#include <functional>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim::sweep {

using ScenarioRunner = std::function<json(const Scenario&)>;

// Calls zerosim::simulate(scenario) without a trace.
ScenarioRunner simulate_runner();

}  // namespace zerosim::sweep
