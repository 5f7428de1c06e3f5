// StubNetwork: a collective takes CollectiveOp::bytes / 1e9 s (1 GB/s), whatever else runs, so
// tests of run_program exercise only the program's semantics. contention_free() is a switch:
// false makes run_program use the engine, true lets it schedule directly.
#pragma once
#include <utility>

#include "sim/net/network_model.hpp"

namespace zerosim {

class StubNetwork : public NetworkModel {
 public:
  explicit StubNetwork(Engine& e, bool contention_free = false) : e_(e), free_(contention_free) {}
  const char* name() const override { return "stub"; }
  bool contention_free() const override { return free_; }
  std::pair<double, NetStats> cost(const CollectiveOp& op) override {
    return {op.bytes / 1e9, NetStats{op.bytes, 0, 1, 0}};
  }
  void account(const NetStats& s) override { stats_ += s; }
  using NetworkModel::start;
  void start(const CollectiveOp& op, Engine::Action on_done) override {
    const auto [time_s, s] = cost(op);
    stats_ += s;
    e_.schedule_after(time_s, on_done);
  }
  const NetStats& stats() const override { return stats_; }
  // Nothing but the stats remains of a collective once its completion (an engine event) ran.
  bool idle() const override { return true; }
  void resume_stats(const NetStats& s) override { stats_ = s; }
  double next_event_time() const override { return kNever; }
  void advance_to(double) override {}

 private:
  Engine& e_;
  bool free_;
  NetStats stats_;
};

}  // namespace zerosim
