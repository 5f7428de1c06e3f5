#include "sim/sweep/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/step/fsdp_config_scenario.hpp"
#include "sim/strategy/strategy.hpp"

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

// The strategy as labels show it: its name, or "ds:FILE" / "fsdp:FILE" for a config.
std::string strategy_label(const Scenario& s) {
  if (!s.deepspeed.empty()) return "ds:" + s.deepspeed;
  if (!s.fsdp_config.empty()) return "fsdp:" + s.fsdp_config;
  return s.strategy;
}

// Bit k set: `scenario`'s strategy ignores axes[k]. A strategy that does not load (a bad name or
// config) ignores nothing: the scenario fails with its own error when it runs.

std::uint64_t ignored_axes_of(const Scenario& scenario, const std::vector<Axis>& axes) {
  if (axes.size() > 64) throw std::logic_error("more sweep axes than mask bits");
  Strategy strategy;
  try {
    strategy = scenario_strategy(scenario);
  } catch (const InputError&) {
    return 0;
  }
  std::uint64_t mask = 0;
  for (std::size_t k = 0; k < axes.size(); ++k)
    if (!scenario_param_applies(*find_scenario_param(axes[k].flag), strategy))
      mask |= std::uint64_t{1} << k;
  return mask;
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

ScenarioSpace::ScenarioSpace(Scenario base, const std::vector<Axis>& axes)
    : base_(std::move(base)) {
  const auto& order = sweep_flags();
  std::set<std::string> seen;
  for (const auto& a : axes) {
    if (std::find(order.begin(), order.end(), a.flag) == order.end())
      throw flag_error(a.flag, "not a sweepable flag");
    if (!seen.insert(a.flag).second) throw flag_error(a.flag, "given more than once");
    if (a.values.empty()) throw flag_error(a.flag, "empty list");
  }
  if (seen.count("--deepspeed")) {
    // A DeepSpeed config fixes the strategy and the batch shape; a second source would be
    // ambiguous.
    for (const char* other : {"--strategy", "--grad-accum", "--hpz-size", "--hsdp-size",
                              "--qwz-bits", "--qgz-bits", "--fsdp-config"})
      if (seen.count(other))
        throw flag_error(
            other, "contradicts --deepspeed (the DeepSpeed config already sets it); give one");
  }
  if (seen.count("--fsdp-config")) {
    // An FSDP config fixes the strategy, its knobs and checkpointing.
    for (const char* other : {"--strategy", "--fsdp-backward-prefetch", "--fsdp-forward-prefetch",
                              "--fsdp-limit-all-gathers", "--fsdp-param-dtype",
                              "--fsdp-reduce-dtype", "--activation-checkpointing"})
      if (seen.count(other))
        throw flag_error(other,
                         "contradicts --fsdp-config (the FSDP config already sets it); give one");
  }
  for (const auto& flag : order)
    for (const auto& a : axes)
      if (a.flag == flag) axes_.push_back(a);
  // The size first: a sweep past the limit is refused before any value is looked at (a value's
  // check may load a model or a cluster).
  for (const Axis& a : axes_) {
    if (size_ > kMaxSweepScenarios / a.values.size())
      throw flag_error(a.flag,
                       fmt::format("the sweep exceeds {} scenarios (report and compare read its "
                                   "document whole, about 20 KB of memory per result); split its "
                                   "axes over several sweeps",
                                   kMaxSweepScenarios));
    size_ *= a.values.size();
  }
  // Validate every value once up front so a bad item fails before any scenario runs.
  for (const Axis& a : axes_)
    for (const auto& v : a.values) {
      Scenario probe = base_;
      apply_flag(probe, a.flag, v);
    }
  strategy_axis_ = axes_.size();
  for (std::size_t k = 0; k < axes_.size(); ++k)
    if (axes_[k].flag == "--strategy" || axes_[k].flag == "--deepspeed" ||
        axes_[k].flag == "--fsdp-config")
      strategy_axis_ = k;
  if (strategy_axis_ == axes_.size()) {
    ignored_.push_back(ignored_axes_of(base_, axes_));
  } else {
    for (const std::string& v : axes_[strategy_axis_].values) {
      Scenario s = base_;
      apply_flag(s, axes_[strategy_axis_].flag, v);
      ignored_.push_back(ignored_axes_of(s, axes_));
    }
  }
}

std::vector<std::size_t> ScenarioSpace::digits(std::size_t index) const {
  if (index >= size_) throw std::out_of_range("sweep scenario index out of range");
  std::vector<std::size_t> d(axes_.size(), 0);
  for (std::size_t k = axes_.size(); k-- > 0;) {  // the last axis is the least significant digit
    d[k] = index % axes_[k].values.size();
    index /= axes_[k].values.size();
  }
  return d;
}

std::size_t ScenarioSpace::index_of(const std::vector<std::size_t>& digits) const {
  if (digits.size() != axes_.size())
    throw std::invalid_argument("one value index per sweep axis expected");
  std::size_t index = 0;
  for (std::size_t k = 0; k < axes_.size(); ++k) {
    if (digits[k] >= axes_[k].values.size())
      throw std::out_of_range("sweep value index out of range");
    index = index * axes_[k].values.size() + digits[k];
  }
  return index;
}

std::uint64_t ScenarioSpace::ignored_mask(const std::vector<std::size_t>& d) const {
  return ignored_[strategy_axis_ < axes_.size() ? d[strategy_axis_] : 0];
}

Scenario ScenarioSpace::at(std::size_t index) const {
  const std::vector<std::size_t> d = digits(index);
  const std::uint64_t ignored = ignored_mask(d);
  Scenario s = base_;
  for (std::size_t k = 0; k < axes_.size(); ++k)
    if (!(ignored >> k & 1)) apply_flag(s, axes_[k].flag, axes_[k].values[d[k]]);
  return s;
}

bool ScenarioSpace::runs(std::size_t index) const {
  const std::vector<std::size_t> d = digits(index);
  const std::uint64_t ignored = ignored_mask(d);
  for (std::size_t k = 0; k < axes_.size(); ++k)
    if ((ignored >> k & 1) && d[k] != 0) return false;
  return true;
}

std::vector<std::size_t> ScenarioSpace::running_indices() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < size_; ++i)
    if (runs(i)) out.push_back(i);
  return out;
}

std::vector<IgnoredAxes> ScenarioSpace::ignored() const {
  std::vector<IgnoredAxes> out;
  const bool axis = strategy_axis_ < axes_.size();
  for (std::size_t v = 0; v < ignored_.size(); ++v) {
    // Of the size / (strategy values) scenarios with this strategy, 1 in (product of the ignored
    // axes' sizes) runs.
    IgnoredAxes entry;
    std::size_t product = 1;
    for (std::size_t k = 0; k < axes_.size(); ++k)
      if (ignored_[v] >> k & 1) {
        entry.flags.push_back(axes_[k].flag);
        product *= axes_[k].values.size();
      }
    if (product == 1) continue;
    Scenario s = base_;
    if (axis) apply_flag(s, axes_[strategy_axis_].flag, axes_[strategy_axis_].values[v]);
    entry.strategy = strategy_label(s);
    const std::size_t with_strategy = size_ / (axis ? axes_[strategy_axis_].values.size() : 1);
    entry.not_run = with_strategy - with_strategy / product;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<Scenario> expand(const Scenario& base, const std::vector<Axis>& axes) {
  const ScenarioSpace space(base, axes);
  std::vector<Scenario> out;
  for (std::size_t i = 0; i < space.size(); ++i)
    if (space.runs(i)) out.push_back(space.at(i));
  return out;
}

std::string scenario_label(const Scenario& s) {
  std::string out = s.cluster;
  if (s.nodes > 0) out += fmt::format(" x{}", s.nodes);
  if (s.nics_per_node > 0 || s.nic_gbps > 0)
    out += fmt::format(", {}x{} Gbps",
                       s.nics_per_node > 0 ? std::to_string(s.nics_per_node) : "preset",
                       s.nic_gbps > 0 ? fmt::format("{:g}", s.nic_gbps) : "preset");
  out += ", " + s.model + ", " + strategy_label(s);
  if (s.micro_batch > 0) out += fmt::format(", micro-batch {}", s.micro_batch);
  if (s.tokens_per_gpu > 0) out += fmt::format(", {} tok/GPU", s.tokens_per_gpu);
  if (s.grad_accum > 1) out += fmt::format(", ga {}", s.grad_accum);
  if (s.tier != NetworkTier::Flow) out += fmt::format(", {}", choice_name(s.tier));
  return out;
}

}  // namespace zerosim::sweep
