#include "sim/report/fsdp_switch.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/core/units.hpp"
#include "sim/strategy/strategy_name.hpp"

namespace zerosim::report {

namespace {

// What must agree for two runs to differ in their strategy alone.
std::string scenario_key(const ResultView& v) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", v.cluster, v.nodes, v.gpus,
                     v.nics_per_node, v.nic_gbps, v.fabric, v.oversubscription, v.model,
                     v.tokens_per_gpu, v.seq_len, v.grad_accum, v.checkpointing,
                     v.tier + "|" + v.profile + "|" + v.attention);
}

bool is_fsdp(const ResultView& v) {
  const auto id = find_strategy_id(v.strategy);
  return id && id->family() == StrategyFamily::Fsdp;
}
bool is_zero3(const ResultView& v) {
  const auto id = find_strategy_id(v.strategy);
  return id && id->kind == StrategyKind::Zero3;
}

// "-20.8%" (a change that rounds to zero prints as +0.0%).
std::string change(double from, double to) {
  if (!(from > 0)) return "n/a";
  const double pct = (to / from - 1) * 100;
  return fmt::format("{:+.1f}%", std::abs(pct) < 0.05 ? 0.0 : pct);
}

std::string escape_html(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::vector<FsdpSwitch> fsdp_switches(const std::vector<const ResultView*>& results) {
  std::vector<FsdpSwitch> out;
  for (const ResultView* f : results) {
    if (!is_fsdp(*f)) continue;
    const std::string key = scenario_key(*f);
    for (const ResultView* z : results)
      if (is_zero3(*z) && scenario_key(*z) == key) out.push_back({f, z});
  }
  return out;
}

std::string fsdp_switch_paragraph(const FsdpSwitch& s) {
  const ResultView& f = *s.fsdp;
  const ResultView& z = *s.zero;
  std::string p = fmt::format(
      "Switching from {} to {} ({} x {} nodes, {}, {} tokens/GPU): step time {} -> {} ({}, "
      "tokens/s {}); cross-node bytes per step {} -> {} ({}); peak memory per GPU {} -> {} ({})",
      f.strategy_name(), z.strategy_name(), f.cluster, f.nodes, f.model, f.tokens_per_gpu,
      format_time(f.step_time_s), format_time(z.step_time_s), change(f.step_time_s, z.step_time_s),
      change(f.tokens_per_s, z.tokens_per_s), format_bytes(f.inter_node_bytes),
      format_bytes(z.inter_node_bytes), change(f.inter_node_bytes, z.inter_node_bytes),
      format_bytes(f.peak_bytes_per_gpu), format_bytes(z.peak_bytes_per_gpu),
      change(f.peak_bytes_per_gpu, z.peak_bytes_per_gpu));
  if (!z.fits)
    p += fmt::format("; {} does not fit in the GPU's {}", z.strategy_name(),
                     format_bytes(z.capacity_bytes));
  else if (!f.fits)
    p += fmt::format("; {} fits where {} does not", z.strategy_name(), f.strategy_name());
  return p + ".";
}

std::string render_fsdp_switch_markdown(const std::vector<const ResultView*>& results) {
  const auto pairs = fsdp_switches(results);
  if (pairs.empty()) return "";
  std::string o = "\n## Switching from FSDP to ZeRO\n\n";
  for (const FsdpSwitch& s : pairs) o += fsdp_switch_paragraph(s) + "\n\n";
  return o;
}

std::string render_fsdp_switch_html(const std::vector<const ResultView*>& results) {
  const auto pairs = fsdp_switches(results);
  if (pairs.empty()) return "";
  std::string o = "<section><h2>Switching from FSDP to ZeRO</h2>\n";
  for (const FsdpSwitch& s : pairs) o += "<p>" + escape_html(fsdp_switch_paragraph(s)) + "</p>\n";
  return o + "</section>\n";
}

}  // namespace zerosim::report
