// FSDP's units: each transformer block is one unit (FSDP1's FlatParameter, FSDP2's parameter
// group: the auto-wrap policy of one block per unit) and the root unit holds what no block holds
// (embedding, final norm, untied head). Shared by the FSDP1 and FSDP2 lowerings. Private to the
// step module.
#pragma once
#include <string>
#include <vector>

#include "sim/workload/transformer.hpp"

namespace zerosim::lowering {

// What every FSDP unit is, whichever FSDP runs it; each lowering derives its runtime state from it.
struct FsdpUnit {
  std::vector<int> modules;  // indices into the module list, forward order
  double elems = 0;          // parameters of the unit (FSDP1's flat parameter)
  bool root = false;
  std::string name;  // block index; "" for the root
  int piece = -1;    // the unit's label piece
};

// The root (first, `root` set), then the blocks in forward order, each with its modules, its
// parameter count and its block index as `name`. Unit: FsdpUnit or a struct derived from it.
template <class Unit>
std::vector<Unit> fsdp_units(const std::vector<Module>& mods) {
  std::vector<Unit> units(1);
  units[0].root = true;
  int last_layer = -1;
  for (std::size_t i = 0; i < mods.size(); ++i) {
    const Module& m = mods[i];
    Unit* u = &units[0];
    if (m.kind == ModuleKind::Layer) {
      if (m.layer != last_layer) {
        units.emplace_back();
        units.back().name = std::to_string(m.layer);
        last_layer = m.layer;
      }
      u = &units.back();
    }
    u->modules.push_back(static_cast<int>(i));
    u->elems += static_cast<double>(m.param_elems());
  }
  return units;
}

}  // namespace zerosim::lowering
