// SimContext: what simulate() keeps from one call to the next, owned by the caller and passed
// explicitly: the reference modes (which fast paths run) and the lowered-step cache. A context is
// used by one thread at a time; a sweep gives each worker thread its own. Results never depend on
// the context: a fresh one, a warm one and the reference modes give bit-identical results
// (tests/step/test_sim_context.cpp).
#pragma once
#include "sim/net/network_model.hpp"
#include "sim/step/lowering_cache.hpp"

namespace zerosim {

// The plain computations each fast path must equal, switched on for tests and benchmarks.
struct ReferenceModes {
  NetworkOptions network;      // flow symmetry and folding, analytic shortcuts
  bool lowering_reuse = true;  // re-time a cached lowered step instead of lowering afresh
};

class SimContext {
 public:
  explicit SimContext(const ReferenceModes& modes = {})
      : modes_(modes), lowering_(modes.lowering_reuse) {}
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

  const ReferenceModes& modes() const { return modes_; }
  LoweringCache& lowering() { return lowering_; }

 private:
  ReferenceModes modes_;
  LoweringCache lowering_;
};

}  // namespace zerosim
