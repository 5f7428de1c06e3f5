// RunMemo: the timing of lowered steps already run, for one SimContext. A G-step accumulation is
// extended from the runs of 1 and 2 micro-steps (accumulation.hpp), so a sweep over accumulation
// steps, strategies and networks runs the same (setup, network) pair again and again: for G = 1,
// for G = 2 and for every G >= 3 of the same batch, strategy and network. What a run gives the
// result (makespan, engine events, breakdown, communication totals, the offload bytes of its
// lowering) is kept for the last few pairs, keyed by the content of everything the run reads: the
// StepSetup (the lowering's input, tokens and accumulation included), the cluster's builder key
// (the whole graph of a builder cluster; explicit graphs have none and are not kept), the cost
// profile by value, the tier, the network options and SM sharing. A hit returns what the run would
// give bit for bit (the engine run is deterministic). The reference mode `lowering_reuse` off runs
// every step (the plain computation).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "sim/net/network_model.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/lower.hpp"

namespace zerosim {

// What one lowered step's run gives the result.
struct StepTiming {
  double makespan_s = 0;
  std::uint64_t events = 0;
  StepTimeBreakdown breakdown;
  CommResult comm;
  LoweredStep::OffloadBytes offload_bytes;  // of the lowering that ran
};

class RunMemo {
 public:
  struct Key {
    StepSetup setup;
    std::string builder_key;  // non-empty: a builder cluster
    std::shared_ptr<const CostProfile> profile;
    NetworkTier tier = NetworkTier::Flow;
    NetworkOptions network;
    bool sm_share = true;  // the scenario's SM sharing
  };
  // The kept timing of `key`, or nullopt.
  std::optional<StepTiming> find(const Key& key);
  // Keeps `timing` for `key` (the oldest pair out beyond kEntries).
  void keep(Key key, const StepTiming& timing);

 private:
  // A batch size's accumulation steps x strategies x networks of a sweep: 2 x 6 x 6 = 72 pairs.
  static constexpr std::size_t kEntries = 128;
  struct Entry {
    Key key;
    StepTiming timing;
  };
  std::list<Entry> lru_;  // front = newest
};

}  // namespace zerosim
