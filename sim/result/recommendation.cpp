#include "sim/result/recommendation.hpp"

namespace zerosim {

std::optional<std::size_t> fastest_index(const std::vector<DecisionOption>& options) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < options.size(); ++i)
    if (options[i].fits && (!best || options[i].tokens_per_s > options[*best].tokens_per_s))
      best = i;
  return best;
}

std::optional<std::size_t> recommend_index(const std::vector<DecisionOption>& options) {
  const std::optional<std::size_t> fastest = fastest_index(options);
  if (!fastest) return std::nullopt;
  const double floor = (1 - kTieFraction) * options[*fastest].tokens_per_s;
  std::size_t pick = *fastest;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const DecisionOption& o = options[i];
    if (!o.fits || o.tokens_per_s < floor) continue;
    const DecisionOption& p = options[pick];
    if (o.techniques < p.techniques ||
        (o.techniques == p.techniques && o.tokens_per_s > p.tokens_per_s))
      pick = i;
  }
  return pick;
}

}  // namespace zerosim
