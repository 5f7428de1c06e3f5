#include "sim/step/lower.hpp"

#include <algorithm>

#include "sim/step/program_builder.hpp"
#include "sim/strategy/quant_groups.hpp"

namespace zerosim {

double forward_time(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return forward_terms(m, p, attention).total();
}

double backward_time(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return backward_terms(m, p, attention).total();
}

double gathered_scale_bytes(const Module& m, int ranks, int shard_ranks, const Strategy& s,
                            QwzGroupCounter* groups) {
  return s.qwz ? qwz_scale_bytes(m, ranks, shard_ranks, groups) : 0;
}

double gathered_bytes(const Module& m, int ranks, int shard_ranks, const Strategy& s,
                      QwzGroupCounter* groups) {
  const double n = static_cast<double>(m.gather_elems);
  if (!s.qwz) return 2 * n;
  return n * s.weight_bits / 8.0 + gathered_scale_bytes(m, ranks, shard_ranks, s, groups);
}

LoweredStep lower_step(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                       ModuleCache* modules, GroupListCache* groups) {
  LoweredStep out;
  if (setup.strategy.fsdp.sharding == FsdpSharding::FullyShard)
    lowering::lower_fsdp2(setup, topo, profile, modules, groups, out);
  else if (setup.strategy.family() == StrategyFamily::Fsdp)
    lowering::lower_fsdp(setup, topo, profile, modules, groups, out);
  else
    lowering::lower_deepspeed(setup, topo, profile, modules, groups, out);
  return out;
}

ModuleTimesTable module_times_table(const StepSetup& setup, const CostProfile& profile,
                                    ModuleCache* modules) {
  ModuleTimesTable t;
  t.modules = lowering::modules_of(setup, modules);
  t.tokens = setup.tokens;
  t.attention = setup.attention;
  lowering::ModuleTimes times;
  times.reset(*t.modules, profile, setup.attention);
  t.signs = times.signs();  // computes every module's times
  t.times.reserve(t.modules->size());
  for (std::size_t i = 0; i < t.modules->size(); ++i) t.times.push_back(times(static_cast<int>(i)));
  return t;
}

bool retime_lowered_step(LoweredStep& low, const ModuleTimesTable& table) {
  if (table.tokens == low.tokens) return true;
  if (table.modules->size() != low.modules->size()) return false;
  if (table.signs != low.module_time_signs) return false;  // an op would appear or vanish
  auto& ops = low.program.streams[lowering::kCompute].ops;
  for (const LoweredStep::ModuleOp& m : low.module_ops) {
    const auto [fwd, bwd] = table.times[static_cast<std::size_t>(m.module)];
    ops[static_cast<std::size_t>(m.op)].duration_s = m.backward ? bwd : fwd;
  }
  low.modules = table.modules;
  low.tokens = table.tokens;
  return true;
}

}  // namespace zerosim
