// AnalyticNetwork: the "analytic" tier. No contention between collectives: each phase of a lowered
// collective takes latency_s + max over links of (bytes of that phase's flows on the link) /
// (link bandwidth x class efficiency); the collective's time is the sum over its phases and its
// completion is one engine event. Flows of one phase that share a link do contend (their bytes
// add). Each distinct op's time and stats are computed once (OpCache): the result depends on the op
// only.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/net/network_model.hpp"
#include "sim/net/op_cache.hpp"

namespace zerosim {

class AnalyticNetwork : public NetworkModel {
 public:
  AnalyticNetwork(Engine& engine, const Topology& topo, const CostProfile& profile);

  const char* name() const override { return "analytic"; }
  void start(const CollectiveOp& op, std::function<void()> on_done) override;
  const NetStats& stats() const override { return stats_; }
  double next_event_time() const override { return kNever; }  // completions are engine events
  void advance_to(double) override {}

  // Time of one lowered plan; accumulates stats.
  double plan_time(const CollectivePlan& plan);

 private:
  Engine& engine_;
  const Topology& topo_;
  const CostProfile& profile_;
  NetStats stats_;
  std::vector<double> capacity_;  // effective bytes/s per link
  std::vector<double> load_;      // bytes per link in the current phase (scratch, kept zeroed)
  std::vector<std::int32_t> touched_;
  struct Cached {
    double time_s;
    NetStats stats;  // what plan_time added
  };
  OpCache<Cached> cache_;
};

}  // namespace zerosim
