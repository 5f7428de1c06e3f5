// `zerosim report` and `zerosim compare` on the command line: formats, atomic output, exit 2 on bad
// input.
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "../sweep/fake_results.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/run_cli.hpp"

namespace fs = std::filesystem;
using namespace zerosim;

TEST_CASE("report writes html, md and csv; compare diffs; bad input exits 2 leaving no file") {
  fs::path d = fs::temp_directory_path() / ("zerosim_report_cli_" + std::to_string(::getpid()));
  fs::create_directories(d);
  auto s = sweep::expand(
      Scenario{},
      {{"--nodes", {"24"}}, {"--nics-per-node", {"1", "4"}}, {"--strategy", {"zero3", "zeropp"}}});
  std::vector<StepResult> results;
  for (const auto& sc : s) results.push_back(testing::fake_result(sc));
  std::string in = (d / "in.json").string();
  std::ofstream(in) << sweep::sweep_document(json::object(), results).dump();
  for (const char* fmt : {"html", "md", "csv"}) {
    std::string out = (d / (std::string("r.") + fmt)).string();
    CliRun r = run("report " + in + " --out " + out);  // format from the extension
    REQUIRE_MESSAGE(r.rc == 0, r.out);
    CHECK(fs::file_size(out) > 100u);
  }
  CliRun c = run("compare " + in + " " + in);
  CHECK(c.rc == 0);
  CHECK(c.out.find("4 matched, 0 only in A, 0 only in B") != std::string::npos);
  CHECK(c.out.find("| +0.00% |") != std::string::npos);

  std::string bad = (d / "bad.json").string();
  std::ofstream(bad) << R"({"kind": "sweep", "results": [{"step_time_s": "fast"}]})";
  std::string missing_dir = (d / "nope" / "r.html").string();
  for (const auto& args : std::vector<std::string>{
           "report " + bad + " --out " + (d / "x.html").string(),
           "report " + in + " --out " + (d / "x.txt").string(),
           "report " + in + " --format pdf --out " + (d / "x.html").string(),
           "report " + in + " --out " + missing_dir,
           "report " + (d / "absent.json").string() + " --out " + (d / "x.html").string(),
           "compare " + in + " " + bad}) {
    CAPTURE(args);
    CliRun r = run(args);
    CHECK(r.rc == 2);
    CHECK_FALSE(fs::exists(d / "x.html"));
    CHECK_FALSE(fs::exists(d / "x.txt"));
  }
  fs::remove_all(d);
}
