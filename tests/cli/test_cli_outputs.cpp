// Where the command line's outputs go: --version; `report` without --out prints Markdown;
// `collective --out` writes exactly what it prints.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("--version prints the project version, the data folder and its presets, and exits 0") {
  CliRun r = run("--version");
  CHECK(r.rc == 0);
  CHECK(r.out.rfind(std::string("zerosim ") + ZEROSIM_VERSION_EXPECTED + "\n", 0) == 0);
  CHECK(r.out.find("\ndata: ") != std::string::npos);
  CHECK(r.out.find("dgx-h100") != std::string::npos);  // a cluster and a profile of that name
  CHECK(r.out.find("llama-3-8b") != std::string::npos);
  // A data folder that is not one is said, not fatal.
  CliRun missing = run("--version", "ZEROSIM_DATA_DIR=/nonexistent ");
  CHECK(missing.rc == 0);
  CHECK(missing.out.find("data: not found") != std::string::npos);
}

TEST_CASE("report without --out prints Markdown; an unknown --out extension names it") {
  fs::path d = temp_dir("reportstdout");
  const std::string result = (d / "r.json").string();
  REQUIRE(run("simulate --cluster dgx-h100 --nodes 2 --model gpt-18b --json --out " + result).rc ==
          0);
  CliRun md = run("report " + result);
  CHECK(md.rc == 0);
  CHECK(md.out.rfind("# zerosim report\n", 0) == 0);
  CliRun explicit_md = run("report " + result + " --format md --out -");
  CHECK(explicit_md.out == md.out);
  CliRun bad = run("report " + result + " --out " + (d / "r.txt").string());
  CHECK(bad.rc == 2);
  CHECK_MESSAGE(bad.out.find("--format") != std::string::npos, bad.out);
  CHECK_MESSAGE(bad.out.find("r.txt") != std::string::npos, bad.out);
  fs::remove_all(d);
}

TEST_CASE("collective --out writes what it would print") {
  fs::path d = temp_dir("collectiveout");
  const std::string args = "collective --cluster dgx-h100 --nodes 2 --op all_gather --bytes 1MiB";
  for (const std::string mode : {"", " --json", " --nccl-tests"}) {
    CAPTURE(mode);
    CliRun printed = run(args + mode);
    REQUIRE(printed.rc == 0);
    const fs::path out = d / "c.out";
    REQUIRE(run(args + mode + " --out " + out.string()).rc == 0);
    CHECK(read_all(out) == printed.out);
  }
  fs::remove_all(d);
}
