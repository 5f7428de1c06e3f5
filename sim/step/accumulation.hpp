// Gradient accumulation without one lowering per micro-step. DeepSpeed drains every stream at the
// end of each micro-step's backward (the reduction streams are synchronised before the next
// forward), so micro-steps 1..G-1 start from the same state and take the same time; only
// micro-step 0 differs (its forward fills hpZ's secondary copy).
// A step of G micro-steps is therefore the step of one plus G - 1 times what the second adds:
//   x(G) = x(1) + (G - 1) (x(2) - x(1))
// for every additive part of the result (step time, busy and exposed times, bytes, op counts).
// simulate() runs G = 1 and G = 2 and extends them, so its time and memory do not grow with G.
#pragma once
#include <cstdint>

#include "sim/result/step_result.hpp"

namespace zerosim {

// The smallest accumulation count simulate() extends instead of lowering every micro-step.
constexpr int kExtendedAccumulationFrom = 3;

double extend_accumulation(double one, double two, int grad_accum);
std::uint64_t extend_accumulation(std::uint64_t one, std::uint64_t two, int grad_accum);
StepTimeBreakdown extend_accumulation(const StepTimeBreakdown& one, const StepTimeBreakdown& two,
                                      int grad_accum);
// Keys of `two` are a superset of those of `one` (the second micro-step runs the first's kinds).
CommResult extend_accumulation(const CommResult& one, const CommResult& two, int grad_accum);

}  // namespace zerosim
