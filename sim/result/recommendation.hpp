// The one rule that decides which configuration to recommend among results: of those that fit in
// GPU memory, the fastest (most tokens/s), unless configurations with fewer ZeRO++ techniques are
// within kTieFraction of its throughput: then the fastest of those with the fewest techniques
// (each of qwZ, hpZ and qgZ is a risk the simpler one does not take: quantized weights and
// gradients, hpZ's secondary copy in memory). Equal throughput and techniques: the first given.
// `plan`'s recommendation, the config `plan --emit-deepspeed` writes and `report`'s
// recommendations all come from recommend_index.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace zerosim {

// Throughput within this fraction of the fastest counts as a tie.
constexpr double kTieFraction = 0.02;

struct DecisionOption {
  double tokens_per_s = 0;
  int techniques = 0;  // ZeRO++ techniques on (StrategyId::techniques)
  bool fits = true;
};

// The index of the recommended option; nullopt when none fits.
std::optional<std::size_t> recommend_index(const std::vector<DecisionOption>& options);
// The index of the fastest option that fits (the first of equals); nullopt when none fits.
std::optional<std::size_t> fastest_index(const std::vector<DecisionOption>& options);

}  // namespace zerosim
