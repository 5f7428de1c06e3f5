// Which sanitizer the test binary was built with, as GCC (__SANITIZE_ADDRESS__,
// __SANITIZE_THREAD__) and clang (__has_feature) each say it: tests that measure a run's time or
// memory, or limit its address space, skip those checks where the instrumentation dominates them.
#pragma once

#if defined(__has_feature)
#define ZEROSIM_HAS_FEATURE(x) __has_feature(x)
#else
#define ZEROSIM_HAS_FEATURE(x) 0
#endif

namespace zerosim::testing {

#if defined(__SANITIZE_ADDRESS__) || ZEROSIM_HAS_FEATURE(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__) || ZEROSIM_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

inline constexpr bool kSanitized = kAddressSanitizer || kThreadSanitizer;

}  // namespace zerosim::testing
