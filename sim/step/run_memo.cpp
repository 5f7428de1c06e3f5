// RunMemo: see run_memo.hpp.
#include "sim/step/run_memo.hpp"

#include <utility>

namespace zerosim {

namespace {

// Cheap members first: sweep neighbours differ in tokens, accumulation, network or strategy.
bool same_key(const RunMemo::Key& a, const RunMemo::Key& b) {
  const StepSetup &x = a.setup, &y = b.setup;
  return x.tokens == y.tokens && x.grad_accum == y.grad_accum && x.seq == y.seq &&
         x.prefetch_depth == y.prefetch_depth && x.checkpointing == y.checkpointing &&
         x.attention == y.attention && x.labels == y.labels && a.network == b.network &&
         a.builder_key == b.builder_key && a.tier == b.tier && a.sm_share == b.sm_share &&
         x.offload == y.offload && x.strategy == y.strategy &&
         (a.profile == b.profile || *a.profile == *b.profile) && x.model == y.model;
}

}  // namespace

std::list<RunMemo::Entry>::iterator RunMemo::lookup(const Key& key) {
  for (auto it = lru_.begin(); it != lru_.end(); ++it)
    if (same_key(it->key, key)) {
      lru_.splice(lru_.begin(), lru_, it);
      return lru_.begin();
    }
  return lru_.end();
}

std::optional<StepTiming> RunMemo::find(const Key& key) {
  const auto it = lookup(key);
  if (it == lru_.end()) return std::nullopt;
  return it->timing;
}

std::shared_ptr<const RunSnapshot> RunMemo::take_snapshot(const Key& key) {
  const auto it = lookup(key);
  return it == lru_.end() ? nullptr : std::move(it->snapshot);
}

void RunMemo::keep(Key key, const StepTiming& timing, std::shared_ptr<const RunSnapshot> snapshot) {
  lru_.push_front(Entry{std::move(key), timing, std::move(snapshot)});
  if (lru_.size() > kEntries) lru_.pop_back();
}

}  // namespace zerosim
