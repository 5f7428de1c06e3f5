// The ZeRO++ paper's cluster as a Scenario: 24 DGX-2 nodes (384 V100s), gpt-18b.
#pragma once
#include <string>

#include "sim/step/simulate.hpp"

inline zerosim::Scenario paper_scenario(const std::string& strategy, int tokens = 1024) {
  zerosim::Scenario s;
  s.cluster = "dgx2-v100";
  s.nodes = 24;
  s.model = "gpt-18b";
  s.strategy = strategy;
  s.tokens_per_gpu = tokens;
  return s;
}
