// Shared by the analytic plan tests: two per-byte plans (UnitPlan) equal in every number, bit for
// bit (the shortcuts and caches must give the plain computation's values, not close ones).
#pragma once
#include <doctest/doctest.h>

#include "sim/net/analytic_shortcuts.hpp"

namespace zerosim::test {

inline void check_same_plan(const UnitPlan& a, const UnitPlan& b) {
  REQUIRE(a.phases.size() == b.phases.size());
  for (std::size_t i = 0; i < a.phases.size(); ++i) {
    CHECK(a.phases[i].latency_s == b.phases[i].latency_s);
    CHECK(a.phases[i].busiest_s_per_byte == b.phases[i].busiest_s_per_byte);
    CHECK(a.phases[i].class_s_per_byte == b.phases[i].class_s_per_byte);
  }
  CHECK(a.stats_per_byte.inter_node_bytes == b.stats_per_byte.inter_node_bytes);
  CHECK(a.stats_per_byte.intra_node_bytes == b.stats_per_byte.intra_node_bytes);
  CHECK(a.stats_per_byte.flows == b.stats_per_byte.flows);
  CHECK(a.nccl == b.nccl);
  CHECK(a.pattern_s_per_byte == b.pattern_s_per_byte);
  CHECK(a.ring_class == b.ring_class);
  CHECK(a.nvls_class == b.nvls_class);
}

}  // namespace zerosim::test
