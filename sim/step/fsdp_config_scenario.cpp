#include "sim/step/fsdp_config_scenario.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/strategy/fsdp_config.hpp"

namespace zerosim {

FsdpConfiguredScenario apply_fsdp_config(const Scenario& sc) {
  FsdpConfiguredScenario out{sc, {}};
  if (sc.fsdp_config.empty()) return out;
  if (!sc.deepspeed.empty())
    throw flag_error("--fsdp-config",
                     "contradicts --deepspeed (each config sets the strategy); give one");
  const FsdpConfig cfg = load_fsdp_config(sc.fsdp_config);
  const json given = scenario_to_json(sc), defaults = scenario_to_json(Scenario{});
  std::string decided;
  for (const FsdpConfigSetting& s : cfg.settings) {
    const ScenarioParam& p = *find_scenario_param(s.flag);
    Scenario probe = sc;
    apply_scenario_param(probe, p, s.value);
    const json& flag_value = given.at(p.key);
    if (flag_value != defaults.at(p.key) && flag_value != scenario_to_json(probe).at(p.key))
      throw InputError(
          cfg.file, s.key,
          fmt::format("sets {} {}, but the command line gives {} {}; give one", s.flag, s.value,
                      s.flag,
                      flag_value.is_string() ? flag_value.get<std::string>() : flag_value.dump()));
    apply_scenario_param(out.scenario, p, s.value);
    decided += fmt::format("{}{} {}", decided.empty() ? "" : ", ", s.flag, s.value);
  }
  out.warnings.push_back(
      fmt::format("FSDP config ({}): {} come from {}", cfg.format, decided, cfg.file));
  for (const std::string& d : cfg.defaults_taken) out.warnings.push_back("FSDP config: " + d);
  if (!cfg.keys_without_effect.empty()) {
    std::string keys;
    for (const std::string& k : cfg.keys_without_effect) keys += (keys.empty() ? "" : "; ") + k;
    out.warnings.push_back(
        "FSDP config: accepted without effect on step time or memory (docs/step-model.md, \"FSDP "
        "configs\"): " +
        keys);
  }
  return out;
}

Strategy scenario_strategy(const Scenario& sc) {
  if (!sc.deepspeed.empty() && sc.fsdp_config.empty()) return load_deepspeed(sc.deepspeed);
  Strategy s = parse_strategy(apply_fsdp_config(sc).scenario.strategy);
  if (!sc.fsdp_config.empty()) s.source = sc.fsdp_config;
  return s;
}

}  // namespace zerosim
