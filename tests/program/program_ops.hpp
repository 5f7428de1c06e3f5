// program_ops: the hand-built ops of the step-program tests (run_program, resume_program): a
// compute or kernel op of d seconds, a collective by index, an event's Record and Wait, and a
// collective of b bytes (the stub network's time is bytes / 1e9).
#pragma once
#include "sim/program/step_program.hpp"

namespace zerosim::testing {

inline StepOp compute(double d) {
  return StepOp{OpKind::Compute, Category::Compute, d, -1, -1, -1};
}
inline StepOp kernel(double d) {
  return StepOp{OpKind::Kernel, Category::QuantKernel, d, -1, -1, -1};
}
inline StepOp coll(int i) { return StepOp{OpKind::Collective, Category::AllGather, 0, i, -1, -1}; }
inline StepOp record(int e) { return StepOp{OpKind::Record, Category::Other, 0, -1, e, -1}; }
inline StepOp wait(int e) { return StepOp{OpKind::Wait, Category::Other, 0, -1, e, -1}; }
inline CollectiveOp bytes_op(double b) {
  CollectiveOp op;
  op.bytes = b;
  return op;
}

}  // namespace zerosim::testing
