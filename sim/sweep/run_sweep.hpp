// Running a list of scenarios on a pool of threads. Results are placed by scenario index, so the
// output does not depend on the number of threads or on which thread finished first. Each finished
// result is appended to a partial file (JSON lines) so an interrupted sweep keeps its work and
// --resume reuses it.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/runner.hpp"

namespace zerosim::sweep {

// A scenario the sweep could not run because its combination of values is bad input (an hpZ
// group that does not divide the world, a micro-batch longer than memory allows to express...).
struct InvalidScenario {
  std::size_t index = 0;
  std::string message;  // the InputError's text: file, field and rule
  bool operator==(const InvalidScenario&) const = default;
};

struct RunOptions {
  int threads = 0;           // 0: all hardware threads
  std::string partial_path;  // "": no partial file; else finished results are appended here
  std::vector<std::string> resume_from;  // partial files whose matching results are reused
  std::function<void(std::size_t done, std::size_t total)> progress;  // called under a lock
  ReferenceModes modes;  // of each worker thread's SimContext
  // Non-null: a scenario failing with an InputError is listed here (by index) and the others run
  // on; other failures still stop the run.
  std::vector<InvalidScenario>* invalid = nullptr;
};

// Runs scenarios[i] for each i in `indices` (all when empty is not meant: pass them explicitly).
// Returns one entry per scenario: the result for the indices that ran (or were resumed), nullopt
// elsewhere. If a scenario throws (an InputError only without options.invalid), no new scenario
// starts, the finished ones stay in the partial file, and the error of the lowest failing index is
// rethrown (an InputError keeps its type, with the scenario named).
std::vector<std::optional<StepResult>> run_scenarios(const std::vector<Scenario>& scenarios,
                                                     const std::vector<std::size_t>& indices,
                                                     const ScenarioRunner& runner,
                                                     const RunOptions& options);

// Reads the results of a partial file that match `scenarios` (same scenario at the same index).
// A truncated last line (the process was killed mid-write) is ignored; a scenario mismatch or a
// result that does not follow docs/result-schema.json is an InputError.
std::vector<std::pair<std::size_t, StepResult>> read_partial(
    const std::string& path, const std::vector<Scenario>& scenarios);

// Partial files that belong to output `out`: out.partial and, under MPI, out.partial.r<rank>.
std::vector<std::string> partial_files_for(const std::string& out);

// The sweep document: {schema_version, kind: "sweep", axes: {flag: [values]}, results: [...]},
// and, when some scenarios were bad input, invalid: [{index, scenario, error}] (index into the
// expanded scenarios).
json sweep_document(const json& axes, const std::vector<StepResult>& results,
                    const std::vector<Scenario>& scenarios = {},
                    const std::vector<InvalidScenario>& invalid = {});

// Number of threads to use: `requested` if > 0, else hardware threads divided by `local_ranks`, at
// least 1.
int resolve_threads(int requested, int local_ranks);

}  // namespace zerosim::sweep
