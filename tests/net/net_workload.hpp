// Shared by the flow-tier equality tests: the collectives of a data-parallel ZeRO step on a
// cluster (hierarchical / intra-node / ring / rail / two-hop / direct), the shipped profiles, and
// whole steps run with a shortcut off and on.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim::test {

inline CostProfile shipped_profile(const std::string& name) {
  return load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/" + name +
                           ".json");
}

inline std::vector<CollectiveOp> data_parallel_ops(const Topology& topo) {
  const int per_node = topo.gpus_per_node();
  return {
      {CollKind::AllGather, Algorithm::Hierarchical, world_group(topo), 64e6, "ag.hier"},
      {CollKind::AllGather, Algorithm::IntraNode, intra_node_groups(topo, per_node), 32e6,
       "ag.hpz"},
      {CollKind::ReduceScatter, Algorithm::Ring, world_group(topo), 48e6, "rs.ring"},
      {CollKind::AllReduce, Algorithm::Auto, rail_groups(topo), 8e6, "ar.rail"},
      {CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(topo), 16e6, "a2a.2hop"},
      {CollKind::AllToAll, Algorithm::Direct, intra_node_groups(topo, per_node), 4e6, "a2a.node"},
  };
}

// A whole step of 1024 tokens per GPU (fat-trees 2:1 oversubscribed), simulated first in the
// reference mode `reference` (a shortcut off), then with the defaults: {reference, fast}.
struct StepCase {
  const char* cluster;
  int nodes;
  const char* fabric;
  const char* model;
  const char* strategy;
  int nics = 0;  // NICs per node, 0: the preset's
};
inline std::pair<StepResult, StepResult> step_with_and_without(const ReferenceModes& reference,
                                                               const StepCase& c) {
  Scenario s;
  s.cluster = c.cluster;
  s.nodes = c.nodes;
  s.fabric = c.fabric;
  if (std::string(c.fabric) == "fat-tree") s.oversubscription = 2;
  s.model = c.model;
  s.strategy = c.strategy;
  s.nics_per_node = c.nics;
  s.tokens_per_gpu = 1024;
  SimContext plain(reference);
  StepResult full = simulate(s, plain);
  return {std::move(full), simulate(s)};
}

// The same, checking that both step times agree within 1e-9 relative (the bar for every
// shortcut); returns {reference, fast} for further checks.
inline std::pair<StepResult, StepResult> same_step_time(const ReferenceModes& reference,
                                                        const StepCase& c) {
  auto runs = step_with_and_without(reference, c);
  const double a = runs.first.step_time_s;
  const double b = runs.second.step_time_s;
  REQUIRE(a > 0);
  CHECK(std::abs(a - b) <= 1e-9 * a);
  return runs;
}

}  // namespace zerosim::test
