// The one decision rule (sim/result/recommendation.hpp): the fastest that fits, or the fastest of
// those with the fewest ZeRO++ techniques within kTieFraction of it.
#include <doctest/doctest.h>

#include "sim/result/recommendation.hpp"

using namespace zerosim;

TEST_CASE("the fastest, unless fewer techniques are within the tie") {
  // The case: ZeRO++ (3 techniques) 0.17% faster than ZeRO-3 + qwZ + qgZ (2).
  const std::vector<DecisionOption> close = {{36.564 / 36.503, 3, true}, {1.0, 2, true}};
  CHECK(fastest_index(close) == 0u);
  CHECK(recommend_index(close) == 1u);
  // Beyond the tie the fastest stays: 1 / (1 - kTieFraction) is just outside.
  const double outside = 1.0 / (1 - kTieFraction) * 1.0001;
  CHECK(recommend_index(std::vector<DecisionOption>{{outside, 3, true}, {1.0, 2, true}}) == 0u);
}

TEST_CASE("among the fewest techniques in the tie, the fastest; what does not fit is skipped") {
  const std::vector<DecisionOption> o = {{1.00, 3, true},   // fastest
                                         {0.99, 1, true},   // within 2%, one technique
                                         {0.995, 1, true},  // faster, also one
                                         {0.999, 0, false},
                                         {0.97, 0, true}};  // outside the 2%
  CHECK(recommend_index(o) == 2u);
  CHECK(!recommend_index(std::vector<DecisionOption>{{1.0, 0, false}}));
  CHECK(!fastest_index({}));
}
