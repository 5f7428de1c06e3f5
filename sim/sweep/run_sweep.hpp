// Running scenarios on a pool of threads. Scenarios are taken by index from a ScenarioAt (decoded
// when a worker starts one), and results are identified by index, so the output does not depend on
// the number of threads or on which thread finished first. Each finished result is appended to a
// partial file (JSON lines) so an interrupted sweep keeps its work and --resume reuses it; the
// result's text in the sweep document is made with its line (RunOptions::document), for the
// document to be written in scenario order, one result at a time (SweepDocumentStream).
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/runner.hpp"
#include "sim/sweep/sweep_spec.hpp"

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
  // Non-null (with a partial file): receives each result written to it, under the runner's lock,
  // as the sweep document's results list holds it (SweepDocumentStream::add_indented), made with
  // its line.
  std::function<void(std::size_t index, std::string_view text)> document;
};

// A result's depth in the sweep document (a member of the results list).
inline constexpr std::size_t kDocumentDepth = 2;

// Scenario `index` of a sweep (a ScenarioSpace decoding it, or an element of a list).
using ScenarioAt = std::function<Scenario(std::size_t index)>;

// Receives each result as it becomes available, under the runner's lock: resumed results first,
// then new ones in completion order. `line_offset` is where the result's line starts in the
// partial file (with RunOptions::partial_path; 0 otherwise).
using ResultSink =
    std::function<void(std::size_t index, StepResult&& result, std::uint64_t line_offset)>;

// Runs scenario_at(i) for each i in `indices` (each < total), handing every result to `sink`.
// Only the scenarios the workers are running are materialised. If a scenario throws (an
// InputError only without options.invalid), no new scenario starts, the finished ones stay in the
// partial file, and the error of the lowest failing index is rethrown (an InputError keeps its
// type, with the scenario named).
void run_scenarios(std::size_t total, const ScenarioAt& scenario_at,
                   const std::vector<std::size_t>& indices, const ScenarioRunner& runner,
                   const RunOptions& options, const ResultSink& sink);

// run_scenarios over a list, keeping the results: one entry per scenario, the result for the
// indices that ran (or were resumed), nullopt elsewhere.
std::vector<std::optional<StepResult>> run_scenarios(const std::vector<Scenario>& scenarios,
                                                     const std::vector<std::size_t>& indices,
                                                     const ScenarioRunner& runner,
                                                     const RunOptions& options);

// Calls visit(index, result) for each result of a partial file that matches the sweep (index <
// total, the same scenario as scenario_at(index)). A last line without its newline (the process
// was killed mid-write) is ignored when it does not parse; any other line that is not one strict
// JSON object (syntax, an empty line, a duplicate key), a scenario mismatch or a result that does
// not follow docs/result-schema.json is an InputError.
void for_each_partial_result(const std::string& path, std::size_t total,
                             const ScenarioAt& scenario_at,
                             const std::function<void(std::size_t, StepResult&&)>& visit);
// The matching results of a partial file, in file order.
std::vector<std::pair<std::size_t, StepResult>> read_partial(
    const std::string& path, const std::vector<Scenario>& scenarios);

// The "result" object of the partial-file line at `line_offset` (as a ResultSink received it).
json partial_result_at(std::ifstream& partial, std::uint64_t line_offset);

// Partial files that belong to output `out`: out.partial and, under MPI, out.partial.r<rank>.
std::vector<std::string> partial_files_for(const std::string& out);

// The sweep document: {schema_version, kind: "sweep", axes: {flag: [values]}, results: [...]},
// and, when some scenarios were bad input, invalid: [{index, scenario, error}] (index into the
// expanded scenarios): SweepDocumentStream's text, read back. The stream also writes
// ignored_axes: [{strategy, flags, scenarios_not_run}] (ignored_axes_json) when strategies ignored
// some axes.
json sweep_document(const json& axes, const std::vector<StepResult>& results,
                    const std::vector<Scenario>& scenarios = {},
                    const std::vector<InvalidScenario>& invalid = {});

// ScenarioSpace::ignored() as the document's ignored_axes list.
json ignored_axes_json(const std::vector<IgnoredAxes>& ignored);

// The sweep document as json::dump(1) writes it, and a newline, written in pieces through `write`
// with one result in memory at a time: the head (axes, invalid, kind) on construction, each
// result by add() in order, the tail by finish().
class SweepDocumentStream {
 public:
  SweepDocumentStream(const json& axes, const std::vector<InvalidScenario>& invalid,
                      const ScenarioAt& scenario_at, std::function<void(std::string_view)> write,
                      const json& ignored_axes = json::array());
  void add(const json& result);
  // The same for a result's text as RunOptions::document received it (indented at
  // kDocumentDepth), written as it is.
  void add_indented(std::string_view text);
  void finish();

 private:
  std::function<void(std::string_view)> write_;
  std::string tail_;  // after the results' opening bracket
  bool any_ = false;
};

// Number of threads to use: `requested` if > 0, else hardware threads divided by `local_ranks`, at
// least 1.
int resolve_threads(int requested, int local_ranks);

}  // namespace zerosim::sweep
