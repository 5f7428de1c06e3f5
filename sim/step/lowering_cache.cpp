// shared_lowered_step: see lowering_cache.hpp.
#include "sim/step/lowering_cache.hpp"

#include <cstdlib>
#include <cstring>
#include <list>

namespace zerosim {

namespace {

bool reuse_disabled() {
  static const bool off = [] {
    const char* v = std::getenv("ZEROSIM_NO_LOWERING_REUSE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return off;
}

// Everything lower_step reads, except the tokens.
struct Key {
  const Topology* topo;
  const CostProfile* profile;
  ModelShape model;
  Strategy strategy;
  int seq, grad_accum, prefetch_depth;
  bool checkpointing;
  bool operator==(const Key&) const = default;
};

struct Entry {
  Key key;
  std::shared_ptr<const Topology> topo;  // held: the key's addresses stay theirs
  std::shared_ptr<const CostProfile> profile;
  std::shared_ptr<LoweredStep> low;
};

}  // namespace

std::shared_ptr<const LoweredStep> shared_lowered_step(const StepSetup& setup,
                                                       std::shared_ptr<const Topology> topo,
                                                       std::shared_ptr<const CostProfile> profile) {
  auto fresh = [&] { return std::make_shared<LoweredStep>(lower_step(setup, *topo, *profile)); };
  if (reuse_disabled()) return fresh();
  // A sweep varies the tokens inside the other axes (grad_accum, strategy, ...): a few entries
  // catch the alternation.
  constexpr std::size_t kEntries = 4;
  thread_local std::list<Entry> lru;  // front = newest
  Key key{topo.get(), profile.get(),    setup.model,          setup.strategy,
          setup.seq,  setup.grad_accum, setup.prefetch_depth, setup.checkpointing};
  for (auto it = lru.begin(); it != lru.end(); ++it) {
    if (!(it->key == key)) continue;
    lru.splice(lru.begin(), lru, it);
    Entry& e = lru.front();
    if (e.low->tokens == setup.tokens) return e.low;
    if (e.low.use_count() > 1 || !retime_lowered_step(*e.low, setup, *profile)) e.low = fresh();
    return e.low;
  }
  auto low = fresh();
  lru.push_front(Entry{std::move(key), std::move(topo), std::move(profile), low});
  if (lru.size() > kEntries) lru.pop_back();
  return low;
}

}  // namespace zerosim
