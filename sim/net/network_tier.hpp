// The network tier a scenario runs on: the flow tier (collectives as flows sharing links max-min
// fair, flow_network.hpp) or the analytic tier (per phase latency plus the busiest link's bytes,
// live collectives sharing each link class, analytic_network.hpp).
#pragma once
#include <cstdint>
#include <span>

#include "sim/core/choice.hpp"

namespace zerosim {

enum class NetworkTier : std::uint8_t { Flow, Analytic };

inline std::span<const ChoiceName<NetworkTier>> choice_table(NetworkTier) {
  static constexpr ChoiceName<NetworkTier> kNames[] = {{NetworkTier::Flow, "flow"},
                                                       {NetworkTier::Analytic, "analytic"}};
  return kNames;
}

}  // namespace zerosim
