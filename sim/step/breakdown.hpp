// Breakdown of a simulated step from its timeline.
// Busy time per category is the sum of op durations. Exposed communication of a collective kind is
// the time during which no compute op (forward, recompute, backward, optimizer) runs while
// collectives of that kind are in flight; when several kinds are in flight at once, that time is
// split equally among them, so the exposed times add up to exactly the time compute waits on
// communication.
#pragma once
#include <map>
#include <string>

#include "sim/program/step_program.hpp"

namespace zerosim {

struct StepBreakdown {
  std::map<std::string, double> busy_s;          // by Category name: sum of op durations
  std::map<std::string, double> exposed_comm_s;  // by collective kind ("all_gather", ...)
  double exposed_comm_total_s = 0;
  double exposed_kernels_s =
      0;  // compute idle, no collective in flight, a kernel running elsewhere
  // Compute idle, no collective in flight, ZeRO-Offload work running (PCIe copies, NVMe I/O, CPU
  // Adam): before kernels, so a step without offload has none.
  double exposed_offload_s = 0;
  // Compute idle, no collective in flight or offload work, stage 3's parameter re-assembly
  // running (its host dispatch or its cat): before kernels.
  double exposed_fetch_s = 0;
  double compute_idle_s = 0;  // compute idle and nothing else running either
};

StepBreakdown compute_breakdown(const StepProgram& program, const RunResult& run);

}  // namespace zerosim
