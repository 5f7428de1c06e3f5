// Relative floating-point comparison for tests. doctest::Approx passes when
// |a - b| < epsilon x (scale + max(|a|, |b|)) with scale 1 by default: an absolute slack of about
// 1.2e-5 that lets any time in seconds below a few microseconds (or a difference of latencies)
// pass whatever its value. Approx here is relative only (scale 0); an expected exact zero is
// compared exactly.
#pragma once
#include <doctest/doctest.h>

namespace zerosim::testing {

inline doctest::Approx Approx(double expected) {
  doctest::Approx a(expected);
  // scale 0 with an expected 0 would accept nothing, not even 0: give zero the least slack.
  return expected == 0 ? a.scale(1e-300) : a.scale(0);
}

}  // namespace zerosim::testing
