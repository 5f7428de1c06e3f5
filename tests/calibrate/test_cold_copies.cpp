// zerosim-calibrate's cold timing: the number of working-set copies a burst cycles through keeps
// at least twice the L2 capacity between two launches on the same copy, within the buffers' room.
#include <doctest/doctest.h>

#include <cstddef>

#include "calibrate/harness/cold_copies.hpp"

using zerosim::harness::cold_copies;

TEST_CASE("cold_copies: ceil(2 x L2 / bytes) + 1, clamped to [1, room]") {
  const std::size_t l2 = 60u << 20;               // an H200's 60 MiB
  CHECK(cold_copies(1u << 20, l2, 1000) == 121);  // 120 others of 1 MiB = 2 x L2
  CHECK(cold_copies(120u << 20, l2, 1000) == 2);  // one other of 2 x L2
  CHECK(cold_copies(1u << 30, l2, 1000) == 2);    // larger than 2 x L2: still one other
  CHECK(cold_copies(1u << 20, l2, 50) == 50);     // the buffers hold only 50
  CHECK(cold_copies(1u << 30, l2, 1) == 1);       // only one fits: itself
  CHECK(cold_copies(1u << 30, l2, 0) == 1);       // never fewer than one
  CHECK(cold_copies(1u << 20, 0, 1000) == 1);     // no L2: no rotation needed
}

TEST_CASE("cold_copies: the other copies always cover twice the L2 when there is room") {
  const std::size_t l2 = 50u << 20;
  for (double bytes = 256; bytes <= 4.0 * double(1u << 30); bytes *= 1.7) {
    CAPTURE(bytes);
    const std::size_t k = cold_copies(bytes, l2, 1u << 30);
    CHECK(double(k - 1) * bytes >= 2.0 * double(l2));
    if (k > 2) CHECK(double(k - 2) * bytes < 2.0 * double(l2));  // and no more than needed
  }
}
