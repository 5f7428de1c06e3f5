// gpt18b_setup: the StepSetup the lowering and scheduling tests share: gpt-18b under a strategy
// string, hpZ (if any) over one 16-GPU DGX-2 node.
#pragma once
#include <cstdint>
#include <string>

#include "sim/step/lower.hpp"

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
