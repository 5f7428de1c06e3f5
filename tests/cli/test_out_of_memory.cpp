// A run that needs more memory than the process may use (here 2 GB of address space and 100 000
// accumulation micro-steps) ends with a clear "out of memory" message and exit 1, not "internal
// error: std::bad_alloc" (or, once a run needs no memory per micro-step, it simply succeeds).
// Skipped under AddressSanitizer, whose shadow memory does not fit an address-space limit.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_cli.hpp"
#include "tests/support/sanitizers.hpp"

TEST_CASE("out of memory exits 1 with a message that says so, not an internal error") {
  if (zerosim::testing::kAddressSanitizer) return;
  const CliRun r = run(
      "simulate --cluster dgx-h100 --nodes 2 --strategy zero3 --model gpt-18b --grad-accum 100000",
      "ulimit -v 2000000 && ");
  INFO(r.out);
  CHECK(r.out.find("internal error") == std::string::npos);
  if (r.rc != 0) {
    CHECK(r.rc == 1);
    CHECK(r.out.find("out of memory") != std::string::npos);
  }
}
