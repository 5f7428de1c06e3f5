// Chrome trace (opens in Perfetto / chrome://tracing) of a simulated step: one process per GPU
// shown (rank 0, the representative program every rank runs), one thread per stream, an "X" event
// per op with its category and, for collectives, kind, algorithm, groups and bytes; otherData holds
// the step time, the scenario and, when given, a note of what the trace leaves out. Written
// atomically.
#pragma once
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/program/step_program.hpp"

namespace zerosim {

json chrome_trace(const StepProgram& program, const RunResult& run, const json& result,
                  const std::string& note = "");
void write_chrome_trace(const std::string& path, const StepProgram& program, const RunResult& run,
                        const json& result, const std::string& note = "");

}  // namespace zerosim
