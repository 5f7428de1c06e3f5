// shared_lowered_step: see lowering_cache.hpp.
#include "sim/step/lowering_cache.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>

#include "sim/workload/transformer.hpp"

namespace zerosim {

namespace {

std::atomic<bool> reuse_on{true};

bool reuse_disabled() {
  static const bool off = [] {
    const char* v = std::getenv("ZEROSIM_NO_LOWERING_REUSE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return off || !reuse_on.load(std::memory_order_relaxed);
}

// Everything lower_step reads, except the tokens. Of the cluster it reads the rank layout only
// (lower.hpp), so clusters that differ in link speeds or fabric share their programs.
// Compared member by member in this order: what tells sweep neighbours apart first, the strings of
// the model last.
struct Key {
  int grad_accum, prefetch_depth, seq;
  bool checkpointing, labels;
  int gpus, gpus_per_node, nodes;
  const CostProfile* profile;
  Strategy strategy;
  ModelShape model;
  bool operator==(const Key&) const = default;
};

struct Entry {
  Key key;
  std::shared_ptr<const CostProfile> profile;  // held: the key's address stays its
  std::shared_ptr<LoweredStep> low;
  std::size_t ops = 0;
};

// The module times of the last few (modules, profile) pairs: the strategies and accumulation
// steps of one batch size re-time from one table. Entries hold both, so their addresses stay
// theirs.
const ModuleTimesTable& shared_module_times(const StepSetup& setup,
                                            const std::shared_ptr<const CostProfile>& profile) {
  struct Entry {
    std::shared_ptr<const CostProfile> profile;
    ModuleTimesTable table;
  };
  constexpr std::size_t kEntries = 4;
  thread_local std::list<Entry> lru;  // front = newest
  const auto modules = shared_modules(setup.model, setup.tokens, setup.seq);
  for (auto it = lru.begin(); it != lru.end(); ++it)
    if (it->table.modules == modules && it->profile == profile) {
      lru.splice(lru.begin(), lru, it);
      return lru.front().table;
    }
  lru.push_front(Entry{profile, module_times_table(setup, *profile)});
  if (lru.size() > kEntries) lru.pop_back();
  return lru.front().table;
}

std::size_t op_count(const LoweredStep& low) {
  std::size_t n = 0;
  for (const Stream& s : low.program.streams) n += s.ops.size();
  return n;
}

}  // namespace

void set_lowering_reuse(bool on) { reuse_on.store(on, std::memory_order_relaxed); }

std::shared_ptr<const LoweredStep> shared_lowered_step(const StepSetup& setup, const Topology& topo,
                                                       std::shared_ptr<const CostProfile> profile) {
  auto fresh = [&] { return std::make_shared<LoweredStep>(lower_step(setup, topo, *profile)); };
  if (reuse_disabled()) return fresh();
  // `zerosim sweep` varies the strategy and the network fastest and the tokens outside them, so a
  // program comes back after (grad_accum x strategy) others: room for 16, within an op budget
  // (about 40 bytes an op with its label) so that a thread's cache stays near 20 MiB.
  constexpr std::size_t kEntries = 16, kMaxOps = std::size_t{1} << 19;
  thread_local std::list<Entry> lru;  // front = newest
  thread_local std::size_t held_ops = 0;
  Key key{setup.grad_accum,     setup.prefetch_depth, setup.seq,
          setup.checkpointing,  setup.labels,         topo.gpu_count(),
          topo.gpus_per_node(), topo.node_count(),    profile.get(),
          setup.strategy,       setup.model};
  for (auto it = lru.begin(); it != lru.end(); ++it) {
    if (!(it->key == key)) continue;
    lru.splice(lru.begin(), lru, it);
    Entry& e = lru.front();
    if (e.low->tokens == setup.tokens) return e.low;
    if (e.low.use_count() > 1 ||
        !retime_lowered_step(*e.low, shared_module_times(setup, profile))) {
      e.low = fresh();
      held_ops -= e.ops;
      e.ops = op_count(*e.low);
      held_ops += e.ops;
    }
    return e.low;
  }
  auto low = fresh();
  const std::size_t ops = op_count(*low);
  lru.push_front(Entry{std::move(key), std::move(profile), low, ops});
  held_ops += ops;
  while (lru.size() > 1 && (lru.size() > kEntries || held_ops > kMaxOps)) {
    held_ops -= lru.back().ops;
    lru.pop_back();
  }
  return low;
}

}  // namespace zerosim
