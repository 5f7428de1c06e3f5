#include "sim/step/lower.hpp"

#include <algorithm>

#include "sim/step/program_builder.hpp"

namespace zerosim {

int prefetch_depth(const Strategy& s, std::int64_t module_elems) {
  // DeepSpeed prefetches tensor by tensor while the prefetched numel is below
  // stage3_prefetch_bucket_size, and releases each tensor of the running module as soon as the
  // module is done, so the live limit (stage3_max_live_parameters) never stops the one-tensor-ahead
  // prefetch as long as single tensors fit under it (the largest, 4h^2, does for every model here).
  // At module granularity that is: none if the bucket is 0, else ceil(bucket / module) modules,
  // at least 1, and more than 1 only as far as the live limit leaves room for whole modules.
  const auto L = std::max<std::int64_t>(1, module_elems);
  // A live limit of 0 (which DeepSpeed accepts) leaves no room to prefetch anything.
  if (s.prefetch_bucket_elems <= 0 || s.max_live_params <= 0) return 0;
  const std::int64_t want = (s.prefetch_bucket_elems + L - 1) / L;
  const std::int64_t room = std::max<std::int64_t>(0, s.max_live_params - L) / L;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(want, room)));
}

double forward_time(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return forward_terms(m, p, attention).total();
}

double backward_time(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return backward_terms(m, p, attention).total();
}

double gathered_bytes(std::int64_t elems, const Strategy& s) {
  const double n = static_cast<double>(elems);
  if (!s.qwz) return 2 * n;
  return n * s.weight_bits / 8.0 + gathered_scale_bytes(elems, s);
}

double gathered_scale_bytes(std::int64_t elems, const Strategy& s) {
  return s.qwz ? 4 * static_cast<double>(elems) / static_cast<double>(s.quant_block) : 0;
}

double quantized_grad_bytes(double elems, const Strategy& s) {
  return elems * s.grad_bits / 8.0 + 4 * elems / static_cast<double>(s.quant_block);
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
