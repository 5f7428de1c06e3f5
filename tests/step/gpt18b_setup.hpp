// gpt18b_setup: the StepSetup the lowering and scheduling tests share: gpt-18b under a strategy
// string, hpZ (if any) over one 16-GPU DGX-2 node; and the Scenario the accumulation tests share:
// gpt-18b on two DGX H100 nodes, 2048 tokens per GPU.
#pragma once
#include <cstdint>
#include <string>

#include "sim/step/lower.hpp"
#include "sim/step/simulate.hpp"

inline zerosim::StepSetup gpt18b_setup(const std::string& strategy, std::int64_t tokens, int seq,
                                       int grad_accum) {
  zerosim::StepSetup st;
  st.model = zerosim::load_model("gpt-18b");
  st.strategy = zerosim::parse_strategy(strategy);
  if (st.strategy.hpz) st.strategy.hpz_size = 16;
  st.tokens = tokens;
  st.seq = seq;
  st.grad_accum = grad_accum;
  return st;
}

inline zerosim::Scenario gpt18b_h100_scenario(const std::string& strategy,
                                              zerosim::NetworkTier tier, int grad_accum) {
  zerosim::Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = "gpt-18b";
  s.strategy = strategy;
  s.tier = tier;
  s.tokens_per_gpu = 2048;
  s.grad_accum = grad_accum;
  return s;
}
