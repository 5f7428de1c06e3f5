// A write that fails (here past a file size limit, as a full disk fails) is not bad input: the
// command exits 1, not 2, naming the output path and the OS error, and leaves no partial file.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"

TEST_CASE("a failed write exits 1 with the path and the OS error, leaving nothing behind") {
  const ScratchDir dir("write_failure");
  const std::string out = dir / "r.json";
  const CliRun r =
      run("simulate --cluster dgx-h100 --nodes 2 --strategy zero3 --model gpt-18b "
          "--out '" +
              out + "'",
          "ulimit -f 1 && ");
  INFO(r.out);
  CHECK(r.rc == 1);
  CHECK(r.out.find(out) != std::string::npos);
  CHECK(r.out.find("File too large") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path));
}
