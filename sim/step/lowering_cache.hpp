// LoweringCache: lower_step memoized for scenarios that differ only in their tokens per
// micro-step. A batch-size sweep lowers the same program (streams, events, collectives, labels)
// again and again; only the module compute ops' durations follow the tokens, and a network sweep
// does not change the program at all (collectives are costed when run). The last few lowered
// steps are kept, keyed by the content of everything lower_step reads but the tokens (of the
// cluster its rank layout; the profile by value); a hit is re-timed in place
// (retime_lowered_step), which gives bit for bit what a fresh lowering gives. Lowering takes its
// modules from the context's ModuleCache and its group lists from this cache's GroupListCache. One
// cache belongs to one SimContext (sim/step/sim_context.hpp), used by one thread at a time.
#pragma once
#include <cstddef>
#include <list>
#include <memory>

#include "sim/profile/cost_profile.hpp"
#include "sim/step/lower.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

class LoweringCache {
 public:
  // reuse false: every call lowers afresh (the plain computation the cache must equal).
  explicit LoweringCache(ModuleCache& modules, bool reuse = true)
      : reuse_(reuse), modules_(modules) {}

  // The lowered step of `setup`. The result stays valid and unchanged until the next call (a
  // later hit re-times it in place only when no caller holds it any more).
  std::shared_ptr<const LoweredStep> get(const StepSetup& setup, const Topology& topo,
                                         std::shared_ptr<const CostProfile> profile);

 private:
  // Everything lower_step reads, except the tokens. Compared member by member in this order:
  // what tells sweep neighbours apart first, the profile and the model's strings last.
  struct Key {
    int grad_accum, prefetch_depth, seq;
    bool checkpointing;
    AttentionImpl attention;
    bool labels;
    int gpus, gpus_per_node, nodes;
    Strategy strategy;
    ModelShape model;
    OffloadRates offload;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    std::shared_ptr<const CostProfile> profile;
    std::shared_ptr<LoweredStep> low;
    std::size_t ops = 0;
  };
  struct TimesEntry {
    std::shared_ptr<const CostProfile> profile;
    ModuleTimesTable table;
  };
  const ModuleTimesTable& module_times(const StepSetup& setup,
                                       const std::shared_ptr<const CostProfile>& profile);

  bool reuse_;
  ModuleCache& modules_;
  GroupListCache groups_;
  std::list<Entry> lru_;  // front = newest
  std::size_t held_ops_ = 0;
  std::list<TimesEntry> times_;  // front = newest
};

}  // namespace zerosim
