#include "sim/report/technique_notes.hpp"

#include <fmt/format.h>

#include "sim/core/units.hpp"
#include "sim/result/recommendation.hpp"
#include "sim/strategy/strategy_name.hpp"

namespace zerosim::report {

namespace {

// What ZeRO-3 leaves exposed, the most any technique can remove.
std::string exposed_share(const ResultView& zero3) {
  const double e = zero3.exposed_comm_s();
  return fmt::format("ZeRO-3 exposes {} of communication in its {} step ({:.1f}%)", format_time(e),
                     format_time(zero3.step_time_s), 100 * e / zero3.step_time_s);
}

// The technique's own effect: its target collective's exposed time against ZeRO-3's, and the
// quantization kernels it adds.
std::string effect(const ResultView& r, const StrategyId& id, const ResultView& zero3) {
  std::string o;
  if (id.qwz || id.hpz)
    o += fmt::format("; its exposed all-gather is {} (ZeRO-3: {})",
                     format_time(r.exposed_all_gather_s), format_time(zero3.exposed_all_gather_s));
  if (id.qgz)
    o += fmt::format("; its exposed gradient reduction is {} (ZeRO-3: {})",
                     format_time(r.exposed_reduce_scatter_s + r.exposed_all_to_all_s),
                     format_time(zero3.exposed_reduce_scatter_s));
  if ((id.qwz || id.qgz) && r.quant_kernels_s > 0)
    o += fmt::format("; its quantization kernels take {}", format_time(r.quant_kernels_s));
  if (id.hpz && !r.hpz_rule_text.empty())
    o += fmt::format("; under DeepSpeed {}'s hpZ rule ({}) {}, with activation checkpointing {}",
                     r.deepspeed_version, r.hpz_rule, r.hpz_rule_text,
                     r.checkpointing ? "on" : "off");
  return o;
}

}  // namespace

std::vector<std::string> technique_notes(const std::vector<const ResultView*>& rows) {
  const ResultView* zero3 = nullptr;
  for (const ResultView* r : rows)
    if (r->strategy == "zero3" && r->variant.empty() && r->fits) zero3 = r;
  std::vector<std::string> out;
  if (!zero3 || !(zero3->tokens_per_s > 0) || !(zero3->step_time_s > 0)) return out;
  for (const ResultView* r : rows) {
    const auto id = find_strategy_id(r->strategy);
    if (!id || id->kind != StrategyKind::Zero3 || !r->fits) continue;
    if (id->techniques() != 1 && id->techniques() != 3) continue;  // singles and ZeRO++
    const double speedup = r->tokens_per_s / zero3->tokens_per_s;
    if (speedup >= 1 + kTieFraction) continue;
    out.push_back(fmt::format("{} gives {:.2f}x ZeRO-3's throughput: {}{}", r->strategy_name(),
                              speedup, exposed_share(*zero3), effect(*r, *id, *zero3)));
  }
  return out;
}

}  // namespace zerosim::report
