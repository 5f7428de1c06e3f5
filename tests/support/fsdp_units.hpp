// Parameters of FSDP's units, counted from the modules for closed forms in tests: the root unit's
// (embedding, final norm, head), all units', the largest block's and the number of blocks.
#pragma once
#include <algorithm>
#include <map>

#include "sim/workload/transformer.hpp"

struct FsdpUnitTotals {
  double root = 0, all = 0, block = 0;
  int blocks = 0;
};

inline FsdpUnitTotals fsdp_unit_totals(const zerosim::ModelShape& model, int tokens, int seq) {
  FsdpUnitTotals u;
  std::map<int, double> per_layer;
  for (const auto& m : zerosim::build_modules(model, tokens, seq)) {
    const auto n = static_cast<double>(m.param_elems());
    u.all += n;
    if (m.kind == zerosim::ModuleKind::Layer)
      per_layer[m.layer] += n;
    else
      u.root += n;
  }
  for (const auto& [_, n] : per_layer) u.block = std::max(u.block, n);
  u.blocks = static_cast<int>(per_layer.size());
  return u;
}
