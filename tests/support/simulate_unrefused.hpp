// simulate_unrefused: simulate() with ReferenceModes::refuse_unfit_early off, so that a scenario no
// node count can fit is simulated (its result says it does not fit) instead of refused. For tests
// of mechanisms (lowering, collectives, memory terms) on configurations larger than the GPU.
#pragma once
#include <string>

#include "sim/step/simulate.hpp"

namespace zerosim::testing {

inline StepResult simulate_unrefused(const Scenario& s, ReferenceModes modes,
                                     const std::string& trace = "") {
  modes.refuse_unfit_early = false;
  SimContext context(modes);
  return simulate(s, context, trace);
}

inline StepResult simulate_unrefused(const Scenario& s, const std::string& trace = "") {
  ReferenceModes modes;
  modes.file_watch = false;  // as simulate(s) without a context
  return simulate_unrefused(s, modes, trace);
}

}  // namespace zerosim::testing
