// A collective's demand on the analytic tier (analytic_network.hpp) and the cache that keeps it
// beyond one network. A demand is, per phase, a latency and per link class the seconds of work at
// the class's full rate, with the op's time alone and its byte counts. On the per-byte plans it is
// a function of the fabric (its plans, FabricPlans), the whole cost profile (NCCL's choice) and
// the op's kind, algorithms, bytes and groups, so a DemandCache holds the demands of one fabric
// under one profile (FabricPlans::demands) for every network on that fabric: a sweep's scenarios
// that differ only in tokens per GPU or accumulation steps start the same collectives and price
// each once.
#pragma once
#include <cstddef>
#include <mutex>
#include <vector>

#include "sim/net/analytic_shortcuts.hpp"
#include "sim/net/network_model.hpp"
#include "sim/net/op_cache.hpp"

namespace zerosim {

// A phase as the sharing sees it: its latency, then per link class the seconds of work at the
// class's full rate.
struct AnalyticSegment {
  double latency_s = 0;
  ClassLoads work_s{};
};

struct AnalyticDemand {
  double time_s = 0;  // alone: the sum of the segments' latency + largest work
  NetStats stats;
  std::vector<AnalyticSegment> segments;
};

// Demands by op. Entries are never removed: what find and insert return stays valid while the
// cache lives (a network keeps the cache it took its demands from). Thread-safe.
class DemandCache {
 public:
  const AnalyticDemand* find(const CollectiveOp& op) const {
    std::lock_guard lock(mu_);
    return map_.find(op);
  }
  // The kept demand of op: d, or an equal one inserted first by another thread.
  const AnalyticDemand& insert(const CollectiveOp& op, AnalyticDemand d) {
    std::lock_guard lock(mu_);
    if (const AnalyticDemand* kept = map_.find(op)) return *kept;
    return map_.insert(op, std::move(d));
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return map_.size();
  }

 private:
  mutable std::mutex mu_;
  OpCache<AnalyticDemand> map_;
};

}  // namespace zerosim
