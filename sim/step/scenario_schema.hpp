// The scenario schema: every parameter of a Scenario declared once (flag, member, type, range or
// choices, help). `simulate`'s options, `sweep`'s lists and help, the cluster flags of the other
// commands, the Python module's keywords (through sweep::expand) and the scenario's JSON identity
// (scenario_to_json, used by `sweep --resume` and `compare`) are all generated from this table, so
// a flag has one range everywhere. Defaults are Scenario's member initializers (the help shows
// them, or default_note where 0 / "" means "the preset's").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/strategy/strategy.hpp"

namespace zerosim {

struct ScenarioParam {
  using Member =
      std::variant<int Scenario::*, double Scenario::*, std::string Scenario::*, bool Scenario::*,
                   NetworkTier Scenario::*, AttentionChoice Scenario::*,
                   BackwardPrefetch Scenario::*, FsdpDtype Scenario::*>;
  std::string flag;  // "--nodes"
  std::string key;   // scenario_to_json's key, the member's name: "nodes"
  // int: INT, double: FLOAT (finite), string: TEXT, bool: BOOL, an enum: TEXT, one of its
  // choice_table's names (choice.hpp)
  Member member;
  double min = 0, max = 0;  // INT and FLOAT: the allowed range, inclusive
  // TEXT: the allowed values when not empty (an enum's: its names); BOOL: true, false
  std::vector<std::string> choices;
  std::string help;
  std::string default_note = {};  // the help's "(default: ...)"; empty: Scenario{}'s value
  bool required = false;          // `zerosim simulate` requires it (no default shown)
  // Null: every strategy reads the parameter. Otherwise the strategies that do (qwZ bits mean
  // nothing without qwZ): a sweep runs an axis a strategy ignores once for it.
  bool (*applies)(const Strategy&) = nullptr;
  // TEXT without choices: the rule a value breaks ("" if valid); null: any text. `form` names the
  // accepted forms in the range column ("MAJOR.MINOR[.PATCH]").
  std::string (*text_rule)(const std::string&) = nullptr;
  std::string form = {};
};

// The table, in sweep expansion order (outermost axis first).
const std::vector<ScenarioParam>& scenario_params();
// The entry of `flag`, or nullptr.
const ScenarioParam* find_scenario_param(std::string_view flag);

// Whether `strategy` reads p's parameter (p.applies).
bool scenario_param_applies(const ScenarioParam& p, const Strategy& strategy);

// The rule a textual value breaks ("must be between 1 and 1048576, not '0'"), or "" if it is valid.
std::string scenario_param_rule(const ScenarioParam& p, const std::string& value);
// Sets p's member of `scenario` from a textual value; a value breaking the rule is an InputError
// naming the flag (flag_error).
void apply_scenario_param(Scenario& scenario, const ScenarioParam& p, const std::string& value);

// The rule of a floating-point value: finite, within [min, max]; "" if it is.
std::string finite_range_rule(double min, double max, const std::string& value);
// The most GPUs a cluster may have on network tier `tier`: a larger one is refused before it is
// built (README, Limits: the time a step takes at the limit).
int tier_max_gpus(NetworkTier tier);
// The most GPUs of a cluster that no tier can fold on a block rotation (a partial leaf block, an
// explicit graph): every node's flows are simulated, so the limit is lower.
int unfolded_max_gpus();
// The most GPUs `plan` takes: it runs every configuration it searches (hundreds) on the cluster.
int plan_max_gpus();

// The rule of an integer value: within [min, max]; "" if it is.
std::string int_range_rule(double min, double max, const std::string& value);

// What a parameter's values are written as: an enum member is TEXT (one of its names).
enum class ParamKind : std::uint8_t { Int, Float, Text, Bool };
ParamKind scenario_param_kind(const ScenarioParam& p);

// "INT", "FLOAT", "TEXT" or "BOOL"; the range or choices ("INT in [1 - 1048576]",
// "{rail,fat-tree}",
// "" for free text); the help, with its default unless the flag is required where it is given.
std::string scenario_param_type(const ScenarioParam& p);
std::string scenario_param_range(const ScenarioParam& p);
std::string scenario_param_help(const ScenarioParam& p, bool required);

// p's value in `scenario` as scenario_to_json writes it: a number, a bool or a string (an enum's
// name).
json scenario_param_json(const ScenarioParam& p, const Scenario& scenario);
// The scenario as JSON, one key per table entry: the identity used by `sweep --resume` and
// `compare`.
json scenario_to_json(const Scenario& scenario);

}  // namespace zerosim
