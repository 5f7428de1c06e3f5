#include "sim/sweep/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/core/error.hpp"

namespace zerosim::sweep {

const std::vector<std::string>& sweep_flags() {
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> out;
    for (const auto& p : scenario_params()) out.push_back(p.flag);
    return out;
  }();
  return flags;
}

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string item = trim(std::string_view(text).substr(
        start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty())
      throw flag_error(flag,
                       fmt::format("empty item in list '{}' (give comma-separated values)", text));
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void apply_flag(Scenario& s, const std::string& flag, const std::string& v) {
  const ScenarioParam* p = find_scenario_param(flag);
  if (!p) throw flag_error(flag, "not a sweepable flag");
  apply_scenario_param(s, *p, v);
}

std::vector<Scenario> expand(const Scenario& base, const std::vector<Axis>& axes) {
  const auto& order = sweep_flags();
  std::vector<const Axis*> sorted;
  std::set<std::string> seen;
  for (const auto& a : axes) {
    if (std::find(order.begin(), order.end(), a.flag) == order.end())
      throw flag_error(a.flag, "not a sweepable flag");
    if (!seen.insert(a.flag).second) throw flag_error(a.flag, "given more than once");
    if (a.values.empty()) throw flag_error(a.flag, "empty list");
    sorted.push_back(&a);
  }
  if (seen.count("--deepspeed")) {
    // A DeepSpeed config fixes the strategy and the batch shape; a second source would be
    // ambiguous.
    for (const char* other :
         {"--strategy", "--grad-accum", "--hpz-size", "--hsdp-size", "--qwz-bits", "--qgz-bits"})
      if (seen.count(other))
        throw flag_error(
            other, "contradicts --deepspeed (the DeepSpeed config already sets it); give one");
  }
  std::sort(sorted.begin(), sorted.end(), [&](const Axis* a, const Axis* b) {
    return std::find(order.begin(), order.end(), a->flag) <
           std::find(order.begin(), order.end(), b->flag);
  });
  // Validate every value once up front so a bad item fails before any scenario runs.
  for (const Axis* a : sorted)
    for (const auto& v : a->values) {
      Scenario probe = base;
      apply_flag(probe, a->flag, v);
    }
  std::size_t total = 1;
  for (const Axis* a : sorted) {
    if (total > kMaxSweepScenarios / a->values.size())
      throw flag_error(a->flag,
                       fmt::format("the sweep exceeds {} scenarios (every result is held until "
                                   "the documents are written, about 40 KB each); split its axes "
                                   "over several sweeps",
                                   kMaxSweepScenarios));
    total *= a->values.size();
  }
  std::vector<Scenario> out;
  out.reserve(total);
  std::vector<std::size_t> digit(sorted.size(), 0);  // mixed-radix counter, last axis fastest
  for (std::size_t n = 0; n < total; ++n) {
    Scenario s = base;
    for (std::size_t k = 0; k < sorted.size(); ++k)
      apply_flag(s, sorted[k]->flag, sorted[k]->values[digit[k]]);
    out.push_back(std::move(s));
    for (std::size_t k = sorted.size(); k-- > 0;) {
      if (++digit[k] < sorted[k]->values.size()) break;
      digit[k] = 0;
    }
  }
  return out;
}

std::string scenario_label(const Scenario& s) {
  std::string out = s.cluster;
  if (s.nodes > 0) out += fmt::format(" x{}", s.nodes);
  if (s.nics_per_node > 0 || s.nic_gbps > 0)
    out += fmt::format(", {}x{} Gbps",
                       s.nics_per_node > 0 ? std::to_string(s.nics_per_node) : "preset",
                       s.nic_gbps > 0 ? fmt::format("{:g}", s.nic_gbps) : "preset");
  out += ", " + s.model + ", " + (s.deepspeed.empty() ? s.strategy : "ds:" + s.deepspeed);
  out += fmt::format(", {} tok/GPU", s.tokens_per_gpu);
  if (s.grad_accum > 1) out += fmt::format(", ga {}", s.grad_accum);
  if (s.tier != "flow") out += ", " + s.tier;
  return out;
}

}  // namespace zerosim::sweep
