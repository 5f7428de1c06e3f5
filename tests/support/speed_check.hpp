// CHECK_SPEED: a test's CPU-time bound. The bounds hold for optimized builds; under
// AddressSanitizer (scripts/ci-sanitize.sh, scripts/ci-fuzz.sh) the same code runs several times
// slower, so there a missed bound is a doctest WARN: the code still runs in full and is checked for
// memory errors, only the speed figure is not asserted.
#pragma once
#include <doctest/doctest.h>

#if defined(__SANITIZE_ADDRESS__)  // GCC
#define ZEROSIM_TEST_UNDER_ASAN 1
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer)
#define ZEROSIM_TEST_UNDER_ASAN 1
#endif
#endif

#ifdef ZEROSIM_TEST_UNDER_ASAN
#define CHECK_SPEED(cond) WARN(cond)
#else
#define CHECK_SPEED(cond) CHECK(cond)
#endif
