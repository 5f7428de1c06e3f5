// RunMemo: the timing of lowered steps already run, for one SimContext. A G-step accumulation is
// extended from the runs of 1 and 2 micro-steps (accumulation.hpp), so a sweep over accumulation
// steps, strategies and networks runs the same (setup, network) pair again and again: for G = 1,
// for G = 2 and for every G >= 3 of the same batch, strategy and network. What a run gives the
// result (makespan, engine events, breakdown, communication totals, the offload bytes of its
// lowering) is kept for the last few pairs, keyed by the content of everything the run reads: the
// StepSetup (the lowering's input, tokens and accumulation included), the cluster's builder key
// (the whole graph of a builder cluster; explicit graphs have none and are not kept), the cost
// profile by value, the tier, the network options and SM sharing. A hit returns what the run would
// give bit for bit (the engine run is deterministic). A run of one micro-step also keeps its
// snapshot at micro-step 0's end, where the run of two micro-steps of the same pair goes on from
// (resume_program: it repeats micro-step 0 up to there bit for bit). The reference mode
// `lowering_reuse` off runs every step (the plain computation).
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
  // Keeps `timing` for `key` (the oldest pair out beyond kEntries), with the snapshot its run took
  // at micro-step 0's end if any (a step of one micro-step: the run of two goes on from it).
  void keep(Key key, const StepTiming& timing, std::shared_ptr<const RunSnapshot> snapshot = {});
  // The snapshot kept with key's timing, handed over (the entry keeps its timing only: the run of
  // two micro-steps goes on from it once, and its result is kept); null: none.
  std::shared_ptr<const RunSnapshot> take_snapshot(const Key& key);
  // Runs that went on from a kept snapshot (resume_program), for tests and measurements.
  void count_resumed() { ++resumed_; }
  std::size_t resumed() const { return resumed_; }

 private:
  // A batch size's accumulation steps x strategies x networks of a sweep: 2 x 6 x 6 = 72 pairs.
  static constexpr std::size_t kEntries = 128;
  struct Entry {
    Key key;
    StepTiming timing;
    std::shared_ptr<const RunSnapshot> snapshot;
  };
  std::list<Entry>::iterator lookup(const Key& key);  // moved to the front; end(): none
  std::list<Entry> lru_;                              // front = newest
  std::size_t resumed_ = 0;
};

}  // namespace zerosim
