// Sweep specification: every `simulate` flag may hold a comma-separated list; the sweep is the
// cartesian product of those lists in a fixed order (axes in the order of the scenario schema,
// scenario_params(), the last one varying fastest), so the same command always yields the same
// scenarios at the same indices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim::sweep {

// One axis: a flag name ("--nic-gbps") and the textual values given for it.
struct Axis {
  std::string flag;
  std::vector<std::string> values;
};

// The flags a sweep accepts, in expansion order (outermost first): the scenario schema's
// (sim/step/scenario_schema.hpp).
const std::vector<std::string>& sweep_flags();

// Splits "100,200, 400" into trimmed items; an empty list or an empty item is an InputError on
// `flag`.
std::vector<std::string> split_list(const std::string& text, const std::string& flag);

// Applies one textual value of `flag` to a scenario, validating it by the schema's rule (InputError
// on the flag).
void apply_flag(Scenario& scenario, const std::string& flag, const std::string& value);

// A strategy of a sweep and the axes it ignores (ZeRO-3 and --qwz-bits): the scenarios that
// differ from one it runs only on those axes are not run.
struct IgnoredAxes {
  std::string strategy;            // the --strategy value, or "ds:" and the --deepspeed file
  std::vector<std::string> flags;  // in expansion order
  std::size_t not_run = 0;         // scenarios of the space skipped for it
};

// The scenarios of a sweep, decoded one at a time from their index: the cartesian product of the
// axes (any subset of sweep_flags(), each at most once) over a base scenario, axes in
// sweep_flags() order regardless of the order given, the last one varying fastest. Index i's
// digits are its mixed-radix representation with one digit per axis (radix: the axis's number of
// values), so a sweep of any size holds only its axes and never a list of its scenarios.
//
// An axis the scenario's strategy does not read (scenario_param_applies: qwZ bits for ZeRO-3, the
// HSDP group size for ZeRO++) is left at the base's value, and only the scenarios at that axis's
// first value run (runs()): `--strategy zero3,zeropp --qwz-bits 4,8` runs ZeRO-3 once.
class ScenarioSpace {
 public:
  // Validates every value of every axis once (an InputError on the flag) and the size against
  // kMaxSweepScenarios. Throws on unknown or repeated flags, on contradictory flags (--deepspeed
  // with --strategy, --grad-accum) and on empty lists.
  ScenarioSpace(Scenario base, const std::vector<Axis>& axes);

  std::size_t size() const { return size_; }
  // The axes in expansion order (outermost first).
  const std::vector<Axis>& axes() const { return axes_; }
  // The value index on each axis of scenario `index` (< size()).
  std::vector<std::size_t> digits(std::size_t index) const;
  // The scenario index of one value index per axis (the inverse of digits()).
  std::size_t index_of(const std::vector<std::size_t>& digits) const;
  // Scenario `index` (< size()): the base with the value of each axis its strategy reads.
  Scenario at(std::size_t index) const;
  // False when scenario `index` equals a lower-indexed one (a value other than the first on an axis
  // its strategy ignores): a sweep does not run it.
  bool runs(std::size_t index) const;
  // The indices that run, in order.
  std::vector<std::size_t> running_indices() const;
  // Each strategy that ignores some axis, with the scenarios not run for it (in value order).
  std::vector<IgnoredAxes> ignored() const;

 private:
  // Bit k: axis k is ignored by the strategy at these digits.
  std::uint64_t ignored_mask(const std::vector<std::size_t>& digits) const;

  Scenario base_;
  std::vector<Axis> axes_;
  std::size_t size_ = 1;
  std::size_t strategy_axis_;           // the --strategy or --deepspeed axis; axes_.size(): none
  std::vector<std::uint64_t> ignored_;  // ignored_mask per value of that axis (one without it)
};

// The most scenarios one sweep runs. The sweep itself holds no scenario or result beyond those
// running; the limit is for what reads its document whole: about 4 KB of JSON per result, and
// report and compare hold about 20 KB per result in memory (100000 results: a 0.4 GB document).
inline constexpr std::size_t kMaxSweepScenarios = 100'000;

// Every scenario of ScenarioSpace(base, axes) that runs, in index order (for small sweeps: the
// Python module's keywords, tests).
std::vector<Scenario> expand(const Scenario& base, const std::vector<Axis>& axes);

// The scenario as JSON (all fields), the identity used by --resume and by `compare`.
using zerosim::scenario_to_json;
// One-line human label: "dgx2-v100 x24, 4x100 Gbps, gpt-18b, zeropp, 2048 tok/GPU".
std::string scenario_label(const Scenario& scenario);

}  // namespace zerosim::sweep
