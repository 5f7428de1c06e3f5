// Sweep specification: every `simulate` flag may hold a comma-separated list; the sweep is the
// cartesian product of those lists in a fixed order (axes in the order of the scenario schema,
// scenario_params(), the last one varying fastest), so the same command always yields the same
// scenarios at the same indices.
#pragma once
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

// Expands axes (any subset of sweep_flags(), each at most once) over `base` into the cartesian
// product. Axes are expanded in sweep_flags() order regardless of the order given. Throws on
// unknown or repeated flags, on contradictory flags (--deepspeed with --strategy, --grad-accum) and
// on empty lists.
// The most scenarios one sweep expands to (its results stay in memory until written).
inline constexpr std::size_t kMaxSweepScenarios = 100'000;
std::vector<Scenario> expand(const Scenario& base, const std::vector<Axis>& axes);

// The scenario as JSON (all fields), the identity used by --resume and by `compare`.
using zerosim::scenario_to_json;
// One-line human label: "dgx2-v100 x24, 4x100 Gbps, gpt-18b, zeropp, 2048 tok/GPU".
std::string scenario_label(const Scenario& scenario);

}  // namespace zerosim::sweep
