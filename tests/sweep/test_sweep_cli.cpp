// `zerosim sweep` end to end with the real simulator: results equal one-by-one `simulate --json`,
// 1 vs 2 threads give identical bytes, and bad input exits 2 with a clear message and no output
// file. (`mpirun -np 2`: test_sweep_mpi.cpp.)
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/json_io.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"
#include "tests/sweep/sweep_cli_fixture.hpp"

namespace fs = std::filesystem;

TEST_CASE("sweep results equal one-by-one simulate results, in order") {
  fs::path d = temp_dir("sweep_eq");
  CliRun r = run(kSweep + " --threads 2 --out " + (d / "s.json").string());
  REQUIRE_MESSAGE(r.rc == 0, r.out);
  auto doc = zerosim::load_json_file((d / "s.json").string());
  CHECK(doc["kind"] == "sweep");
  CHECK(doc["schema_version"] == zerosim::kResultSchemaVersion);
  REQUIRE(doc["results"].size() == 4u);
  int i = 0;
  for (const char* nics : {"1", "4"})
    for (const char* strategy : {"zero3", "zeropp"}) {
      fs::path one = d / ("one" + std::to_string(i) + ".json");
      CliRun s = run(
          std::string("simulate --cluster dgx2-v100 --nodes 2 --model gpt-18b --tier analytic ") +
          "--tokens-per-gpu 1024 --nics-per-node " + nics + " --strategy " + strategy + " --out " +
          one.string());
      REQUIRE_MESSAGE(s.rc == 0, s.out);
      CHECK(doc["results"][i] == zerosim::load_json_file(one.string()));
      ++i;
    }
  CHECK_FALSE(fs::exists(d / "s.json.partial"));  // removed once the complete file is in place
  fs::remove_all(d);
}

TEST_CASE("1 thread and 2 threads write identical JSON and CSV bytes") {
  fs::path d = temp_dir("sweep_threads");
  CliRun a = run(kSweep + " --threads 1 --out " + (d / "a.json").string() + " --csv " +
                 (d / "a.csv").string());
  CliRun b = run(kSweep + " --threads 2 --out " + (d / "b.json").string() + " --csv " +
                 (d / "b.csv").string());
  REQUIRE_MESSAGE(a.rc == 0, a.out);
  REQUIRE_MESSAGE(b.rc == 0, b.out);
  CHECK(slurp(d / "a.json") == slurp(d / "b.json"));
  CHECK(slurp(d / "a.csv") == slurp(d / "b.csv"));
  std::string csv = slurp(d / "a.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  fs::remove_all(d);
}

TEST_CASE("bad input: exit 2, the flag named, no output file") {
  fs::path d = temp_dir("sweep_bad");
  std::string out = (d / "x.json").string();
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--nic-gbps '' --out " + out, "--nic-gbps"},
           {"--nic-gbps 100,,200 --out " + out, "empty item"},
           {"--strategy zero3 --deepspeed ds.json --out " + out, "contradicts --deepspeed"},
           {"--nodes 0,2 --out " + out, "--nodes"},
           {"--tier exact --out " + out, "--tier"},
           {"--out " + (d / "missing" / "x.json").string(), "output folder does not exist"},
           {"--out " + d.string(), "is a folder"},
           {"--csv " + (d / "missing" / "x.csv").string(), "--csv"},
           {"--resume", "--resume"},
           {"--model no-such-model --tier analytic --out " + out, "no-such-model"},
       }) {
    CAPTURE(c.args);
    const std::string model = c.args.find("--model") == std::string::npos ? "--model gpt-18b " : "";
    CliRun r = run("sweep --cluster dgx2-v100 --nodes 2 " + model + c.args);
    CHECK(r.rc == 2);
    CHECK_MESSAGE(r.out.find(c.expect) != std::string::npos, r.out);
    CHECK_FALSE(fs::exists(out));
  }
  fs::remove_all(d);
}

TEST_CASE("an invalid combination: the valid scenarios are written, the invalid listed, exit 2") {
  // hpZ over 16 GPUs cannot run on one 8-GPU node; it can on two.
  fs::path d = temp_dir("sweep_invalid");
  const std::string out = (d / "s.json").string();
  CliRun r =
      run("sweep --cluster dgx-h100 --nodes 1,2 --model gpt-18b --hpz-size 8,16 "
          "--tier analytic --out " +
          out);
  CHECK(r.rc == 2);
  CHECK_MESSAGE(r.out.find("scenario #1 (") != std::string::npos, r.out);
  CHECK_MESSAGE(r.out.find("1 of 4 scenarios are bad input") != std::string::npos, r.out);
  auto doc = zerosim::load_json_file(out);
  CHECK(doc["results"].size() == 3u);
  REQUIRE(doc["invalid"].size() == 1u);
  CHECK(doc["invalid"][0]["index"] == 1);
  CHECK(doc["invalid"][0]["scenario"]["hpz_partition"] == 16);
  CHECK(doc["invalid"][0]["scenario"]["nodes"] == 1);
  CHECK(doc["invalid"][0]["error"].get<std::string>().find("--hpz-size") != std::string::npos);
  CHECK(run("report " + out).rc == 0);  // what the sweep writes, report reads
  fs::remove_all(d);
}

TEST_CASE("--resume completes an interrupted sweep from its partial file") {
  fs::path d = temp_dir("sweep_resume");
  std::string out = (d / "s.json").string();
  CliRun full = run(kSweep + " --out " + (d / "full.json").string());
  REQUIRE_MESSAGE(full.rc == 0, full.out);
  auto doc = zerosim::load_json_file((d / "full.json").string());
  // The partial file an interrupted run leaves: scenarios 0 and 2 finished. Their results are
  // marked so the test can see that they were reused rather than recomputed.
  zerosim::Scenario base;
  base.cluster = "dgx2-v100";
  base.nodes = 2;
  base.model = "gpt-18b";
  base.tier = zerosim::NetworkTier::Analytic;
  base.tokens_per_gpu = 1024;
  auto scenarios = zerosim::sweep::expand(
      base, {{"--nics-per-node", {"1", "4"}}, {"--strategy", {"zero3", "zeropp"}}});
  {
    std::ofstream p(out + ".partial");
    p << R"({"kind":"sweep-partial","schema_version":1,"total":4})"
      << "\n";
    for (int i : {0, 2}) {
      zerosim::json r = doc["results"][i];
      r["warnings"].push_back("reused from the partial file");
      p << zerosim::json{{"index", i},
                         {"scenario", zerosim::sweep::scenario_to_json(scenarios[i])},
                         {"result", r}}
               .dump()
        << "\n";
    }
    p << R"({"index":1,"scen)";  // cut mid-line by the interrupt
  }
  CliRun resumed = run(kSweep + " --resume --out " + out);
  REQUIRE_MESSAGE(resumed.rc == 0, resumed.out);
  auto res = zerosim::load_json_file(out);
  REQUIRE(res["results"].size() == 4u);
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    bool reused = i == 0 || i == 2;
    CHECK((res["results"][i]["warnings"].dump().find("reused from the partial") !=
           std::string::npos) == reused);
    zerosim::json plain = res["results"][i];
    if (reused) plain["warnings"].erase(plain["warnings"].size() - 1);
    CHECK(plain == doc["results"][i]);
  }
  CHECK_FALSE(fs::exists(out + ".partial"));
  // A partial file from another sweep is refused with exit 2.
  {
    std::ofstream p(out + ".partial");
    p << R"({"kind":"sweep-partial","schema_version":1,"total":4})"
      << "\n"
      << R"({"index":0,"scenario":{"cluster":"other"},"result":{}})"
      << "\n";
  }
  CliRun bad = run(kSweep + " --resume --out " + out);
  CHECK(bad.rc == 2);
  CHECK(bad.out.find("different sweep") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("a strategy that ignores a swept axis runs once, and the sweep says so") {
  fs::path d = temp_dir("sweep_ignored");
  const std::string out = (d / "s.json").string();
  CliRun r = run(
      "sweep --cluster dgx2-v100 --nodes 2 --model gpt-18b --tier analytic --tokens-per-gpu 1024 "
      "--strategy zero3,zeropp --qwz-bits 4,8 --out " +
      out);
  REQUIRE_MESSAGE(r.rc == 0, r.out);
  CHECK_MESSAGE(r.out.find("zero3 does not read --qwz-bits; 1 scenario that would repeat its "
                           "results is not run") != std::string::npos,
                r.out);
  auto doc = zerosim::load_json_file(out);
  REQUIRE(doc["results"].size() == 3u);  // ZeRO-3 once, ZeRO++ with INT4 and INT8 weights
  CHECK(doc["results"][0]["scenario"]["strategy"]["name"] == "zero3");
  CHECK(doc["results"][1]["scenario"]["strategy"]["weight_bits"] == 4);
  CHECK(doc["results"][2]["scenario"]["strategy"]["weight_bits"] == 8);
  REQUIRE(doc["ignored_axes"].size() == 1u);
  CHECK(doc["ignored_axes"][0]["strategy"] == "zero3");
  CHECK(doc["ignored_axes"][0]["flags"] == zerosim::json::array({"--qwz-bits"}));
  CHECK(doc["ignored_axes"][0]["scenarios_not_run"] == 1);
  fs::remove_all(d);
}

TEST_CASE("without --out: a table on standard output; --json and --out - print the document") {
  fs::path d = temp_dir("sweep_stdout");
  // Standard output alone to a file (run() appends 2>&1 after the arguments: `; exit $?` ends
  // the command before it, so the summary line on standard error is left out).
  const auto to_file = [](const fs::path& p) {
    return " > " + p.string() + " 2>/dev/null; exit $?";
  };
  CliRun t = run(kSweep + " --threads 1" + to_file(d / "table.txt"));
  REQUIRE_MESSAGE(t.rc == 0, t.out);
  std::istringstream lines(slurp(d / "table.txt"));
  std::string header, row;
  std::getline(lines, header);
  CHECK(header.rfind("nics-per-node  strategy  step s", 0) == 0);
  int rows = 0;
  while (std::getline(lines, row)) ++rows;
  CHECK(rows == 4);
  CHECK(slurp(d / "table.txt").find('{') == std::string::npos);

  CliRun file = run(kSweep + " --threads 1 --out " + (d / "s.json").string());
  REQUIRE_MESSAGE(file.rc == 0, file.out);
  for (const char* flag : {" --json", " --out -"}) {
    CliRun j = run(kSweep + " --threads 1" + flag + to_file(d / "stdout.json"));
    REQUIRE_MESSAGE(j.rc == 0, j.out);
    CHECK(slurp(d / "stdout.json") == slurp(d / "s.json"));
  }
  CliRun both = run(kSweep + " --json --out " + (d / "x.json").string());
  CHECK(both.rc == 2);
  CHECK(both.out.find("--json") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "x.json"));
  fs::remove_all(d);
}
