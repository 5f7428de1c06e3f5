// An FSDP config (--fsdp-config, sim/strategy/fsdp_config.hpp) applied to a scenario: the settings
// it makes replace the scenario's strategy, --fsdp-* knobs and activation checkpointing, as a
// DeepSpeed config replaces --strategy. A flag given on the command line with a value other than
// its default that the config sets otherwise is an error naming the config's key and the flag (a
// flag left at its default cannot be told from one not given: the config decides it). Flags the
// config does not set (knobs its format has no key for, or keys it leaves out) keep their value.
#pragma once
#include <string>
#include <vector>

#include "sim/step/simulate.hpp"
#include "sim/strategy/strategy.hpp"

namespace zerosim {

struct FsdpConfiguredScenario {
  Scenario scenario;                  // with the config's settings applied
  std::vector<std::string> warnings;  // what the config decided, defaults it took, keys w/o effect
};

// `sc` unchanged (no warnings) without --fsdp-config; with it, the config read and applied.
// InputError: the config's own (file, key, rule), a contradicting flag, or --deepspeed given too.
FsdpConfiguredScenario apply_fsdp_config(const Scenario& sc);

// The strategy a scenario runs, before the cluster resolves its group sizes: from its DeepSpeed
// config, its FSDP config, or --strategy.
Strategy scenario_strategy(const Scenario& sc);

}  // namespace zerosim
