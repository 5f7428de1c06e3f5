// StubNetwork: a collective takes CollectiveOp::bytes / 1e9 s (1 GB/s), whatever else runs, so
// tests of run_program exercise only the program's semantics. contention_free() is a switch:
// false makes run_program use the engine, true lets it schedule directly.
#pragma once
#include <functional>
#include <utility>

#include "sim/net/network_model.hpp"

namespace zerosim {

class StubNetwork : public NetworkModel {
 public:
  explicit StubNetwork(Engine& e, bool contention_free = false) : e_(e), free_(contention_free) {}
  const char* name() const override { return "stub"; }
  bool contention_free() const override { return free_; }
  double charge(const CollectiveOp& op) override {
    stats_.inter_node_bytes += op.bytes;
    ++stats_.flows;
    return op.bytes / 1e9;
  }
  void start(const CollectiveOp& op, std::function<void()> on_done) override {
    e_.schedule_after(charge(op), std::move(on_done));
  }
  const NetStats& stats() const override { return stats_; }
  double next_event_time() const override { return kNever; }
  void advance_to(double) override {}

 private:
  Engine& e_;
  bool free_;
  NetStats stats_;
};

}  // namespace zerosim
