// LoweringCache: see lowering_cache.hpp.
#include "sim/step/lowering_cache.hpp"

#include "sim/workload/transformer.hpp"

namespace zerosim {

namespace {

// Profiles by value; the profile memo hands out one object per file content, so the address
// comparison settles nearly every lookup before the member-by-member one.
bool same_profile(const std::shared_ptr<const CostProfile>& a,
                  const std::shared_ptr<const CostProfile>& b) {
  return a == b || *a == *b;
}

std::size_t op_count(const LoweredStep& low) {
  std::size_t n = 0;
  for (const Stream& s : low.program.streams) n += s.ops.size();
  return n;
}

}  // namespace

// The module times of the last few (modules, attention, profile) triples: the strategies and
// accumulation steps of one batch size re-time from one table.
const ModuleTimesTable& LoweringCache::module_times(
    const StepSetup& setup, const std::shared_ptr<const CostProfile>& profile) {
  constexpr std::size_t kEntries = 4;
  const auto modules = modules_.modules(setup.model, setup.tokens, setup.seq);
  for (auto it = times_.begin(); it != times_.end(); ++it)
    if (it->table.modules == modules && it->table.attention == setup.attention &&
        same_profile(it->profile, profile)) {
      times_.splice(times_.begin(), times_, it);
      return times_.front().table;
    }
  times_.push_front(TimesEntry{profile, module_times_table(setup, *profile, &modules_)});
  if (times_.size() > kEntries) times_.pop_back();
  return times_.front().table;
}

std::shared_ptr<const LoweredStep> LoweringCache::get(const StepSetup& setup, const Topology& topo,
                                                      std::shared_ptr<const CostProfile> profile) {
  auto fresh = [&] {
    return std::make_shared<LoweredStep>(lower_step(setup, topo, *profile, &modules_, &groups_));
  };
  if (!reuse_) return fresh();
  // `zerosim sweep` varies the strategy and the network fastest and the tokens outside them, so a
  // program comes back after (grad_accum x strategy) others: room for 16, within an op budget
  // (about 40 bytes an op with its label) so that a cache stays near 20 MiB.
  constexpr std::size_t kEntries = 16, kMaxOps = std::size_t{1} << 19;
  Key key{setup.grad_accum,  setup.prefetch_depth, setup.seq,        setup.checkpointing,
          setup.attention,   setup.labels,         topo.gpu_count(), topo.gpus_per_node(),
          topo.node_count(), setup.strategy,       setup.model,      setup.offload};
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (!(it->key == key) || !same_profile(it->profile, profile)) continue;
    lru_.splice(lru_.begin(), lru_, it);
    Entry& e = lru_.front();
    if (e.low->tokens == setup.tokens) return e.low;
    if (e.low.use_count() > 1 || !retime_lowered_step(*e.low, module_times(setup, profile))) {
      e.low = fresh();
      held_ops_ -= e.ops;
      e.ops = op_count(*e.low);
      held_ops_ += e.ops;
    }
    return e.low;
  }
  auto low = fresh();
  const std::size_t ops = op_count(*low);
  lru_.push_front(Entry{std::move(key), std::move(profile), low, ops});
  held_ops_ += ops;
  while (lru_.size() > 1 && (lru_.size() > kEntries || held_ops_ > kMaxOps)) {
    held_ops_ -= lru_.back().ops;
    lru_.pop_back();
  }
  return low;
}

}  // namespace zerosim
