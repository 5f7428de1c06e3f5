// StepProgram: per-rank CUDA-stream-like queues of ops (Compute, Kernel, Collective, event Record and
// Wait). Ranks of a data-parallel step are identical, so one program stands for every rank and each
// Collective op carries all of its concurrent groups; run_program executes it on the engine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/network_model.hpp"

namespace zerosim {

enum class OpKind { Compute, Kernel, Collective, Record, Wait };

// What an op's time is charged to in the breakdown.
enum class Category { Compute, Recompute, Optimizer, QuantKernel, AllGather, ReduceScatter, AllToAll, AllReduce, Other };
const char* to_string(Category c);

struct StepOp {
  OpKind kind = OpKind::Compute;
  Category category = Category::Compute;
  double duration_s = 0;  // Compute / Kernel
  int collective = -1;    // index into StepProgram::collectives
  int event = -1;         // Record / Wait
  int label = -1;         // index into StepProgram::labels (for traces)
};

struct Stream {
  std::string name;  // "compute", "allgather", "reduce", ...
  std::vector<StepOp> ops;
};

struct StepProgram {
  std::vector<Stream> streams;
  std::vector<CollectiveOp> collectives;
  std::vector<std::string> labels;
  int event_count = 0;
};

struct OpTiming {
  int stream = -1, op = -1;
  double start = 0, end = 0;
};

struct RunResult {
  double makespan_s = 0;
  std::vector<OpTiming> timeline;  // every Compute/Kernel/Collective op, in completion order
  std::uint64_t events = 0;
  NetStats net;
};

// Executes the program: each stream runs its ops in order; Wait blocks until the matching Record has
// executed; a Collective starts on the network model and completes when it says so. Throws
// std::logic_error on a deadlock (a Wait whose Record never runs).
RunResult run_program(const StepProgram& program, Engine& engine, NetworkModel& network);

}  // namespace zerosim
