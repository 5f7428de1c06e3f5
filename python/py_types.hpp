// The module's own result types that more than one binding reads: a sweep's outcome and a plan.
#pragma once
#include <string>
#include <vector>

#include "sim/plan/planner.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim::python {

// A sweep's outcome: the results in the sweep's order, and the combinations that were bad input
// with their errors (not run).
struct SweepResult {
  std::vector<StepResult> results;
  std::vector<Scenario> invalid_scenarios;
  std::vector<std::string> invalid_errors;
};

// A plan and the cluster shape its DeepSpeed configs are written for.
struct Plan {
  plan::PlanResult result;
  plan::ClusterShape shape;
};

}  // namespace zerosim::python
