// A test that cannot run here (a tool or library is missing) ends its executable with exit code
// 77, which CTest reports as "Skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt) instead of
// passed. Only for executables whose every test case needs the missing part.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace zerosim::testing {

[[noreturn]] inline void skip_executable(const std::string& why) {
  std::printf("SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
  std::exit(77);
}

}  // namespace zerosim::testing
