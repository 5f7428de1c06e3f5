// 'zerosim calibrate' end to end: import the representative nccl-tests log, fit a profile from it,
// check the written profile; bad logs and bad flags exit 2 naming file:line or the flag.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibrate/fit/collective_fit.hpp"
#include "calibrate/fit/measurements.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/profile/cost_profile.hpp"

using namespace zerosim;

namespace {

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& args) {
  std::string cmd = std::string(ZEROSIM_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::filesystem::path tmpdir() {
  auto d =
      std::filesystem::temp_directory_path() / ("zerosim_calib_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

const std::string kFixture =
    std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt";

}  // namespace

TEST_CASE("import-nccl-tests then fit writes a measured profile") {
  auto d = tmpdir();
  std::string meas = (d / "meas.jsonl").string(), prof = (d / "prof.json").string();
  Run imp = run("calibrate import-nccl-tests " + kFixture + " --op all_reduce --out " + meas);
  CAPTURE(imp.out);
  REQUIRE(imp.code == 0);
  CHECK(imp.out.find("31 all_reduce records") != std::string::npos);
  calib::Measurements m;
  calib::load_measurements(meas, m);
  CHECK(m.collectives.size() == 31);
  CHECK(m.provenance[0]["source"] == "nccl-tests");

  Run no_cluster = run("calibrate fit " + meas + " --base dgx-a100 --out " + prof);
  CHECK(no_cluster.code == 2);
  CHECK(no_cluster.out.find("--cluster") != std::string::npos);
  Run fit = run("calibrate fit " + meas + " --base dgx-a100 --cluster dgx-a100 --out " + prof);
  CAPTURE(fit.out);
  REQUIRE(fit.code == 0);
  CHECK(fit.out.find("all_reduce ranks=8 nodes=1") != std::string::npos);
  CHECK(fit.out.find(meas + ":2") != std::string::npos);  // each point is listed with its record
  CHECK(fit.out.find("link_classes/nvlink/efficiency") != std::string::npos);
  CostProfile p = load_cost_profile(prof);
  CHECK(p.status == "measured");
  CHECK(p.name == "dgx-a100-measured");
  // The fitted model reproduces the log: mean |error| under 5% (measured 3.9%).
  double mean = 0;
  for (const auto& r : m.collectives)
    mean += std::abs(calib::predict_record(r, "dgx-a100", p) - r.time_s) / r.time_s /
            static_cast<double>(m.collectives.size());
  CHECK(mean < 0.05);
  std::filesystem::remove_all(d);
}

TEST_CASE("bad logs and flags exit 2 with file:line or the flag") {
  auto d = tmpdir();
  std::string bad = (d / "bad.txt").string(), meas = (d / "m.jsonl").string();
  {
    std::ofstream f(bad);
    f << "# nThread 1 nGpus 8\n"
      << "        1024   256  float  sum  -1   20.0  0.05  0.09  0  20.0  0.05  0.09  0\n"
      << "        2048   512  float  sum  -1   20.0  0.10  0.18  5  20.0  0.10  0.18  0\n";
  }
  Run r = run("calibrate import-nccl-tests " + bad + " --op all_reduce --ranks 8 --out " + meas);
  CHECK(r.code == 2);
  CHECK(r.out.find(bad + ":3") != std::string::npos);
  CHECK(r.out.find("#wrong") != std::string::npos);
  CHECK(!std::filesystem::exists(meas));  // nothing written on failure

  std::string no_rank_lines = (d / "norank.txt").string();
  {
    std::ofstream f(no_rank_lines);
    f << "        1024   256  float  sum  -1   20.0  0.05  0.09  0  20.0  0.05  0.09  0\n";
  }
  Run no_ranks =
      run("calibrate import-nccl-tests " + no_rank_lines + " --op all_reduce --out " + meas);
  CHECK(no_ranks.code == 2);
  CHECK(no_ranks.out.find("--ranks") != std::string::npos);

  Run bad_op = run("calibrate import-nccl-tests " + kFixture + " --op allreduce --out " + meas);
  CHECK(bad_op.code == 2);
  CHECK(bad_op.out.find("--op") != std::string::npos);

  Run missing = run("calibrate fit " + (d / "none.jsonl").string() + " --base dgx-a100 --out " +
                    (d / "p.json").string());
  CHECK(missing.code == 2);
  CHECK(missing.out.find("none.jsonl") != std::string::npos);

  {
    std::ofstream f(meas);
    f << R"({"format": "zerosim-measurements", "version": 1, "provenance": {}})"
      << "\n"
      << R"({"kind": "kernel", "name": "copy", "bytes": 4096, "time_s": 1e-6})"
      << "\n";
  }
  Run no_base = run("calibrate fit " + meas + " --out " + (d / "p.json").string());
  CHECK(no_base.code == 2);
  CHECK(no_base.out.find("--base") != std::string::npos);
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "import-nccl-tests: a multi-collective real log, gpu_model in provenance, fit without --base") {
  auto d = tmpdir();
  const std::string log =
      std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/real/h100-10nodes/nccl_N10_G8.log";
  std::string meas = (d / "meas.jsonl").string(), prof = (d / "prof.json").string();
  Run imp = run("calibrate import-nccl-tests " + log + " --out " + meas);
  CAPTURE(imp.out);
  REQUIRE(imp.code == 0);
  CHECK(imp.out.find("50 records (all_reduce 10, all_gather 10, reduce_scatter 10, all_to_all 10, "
                     "send_recv 10)") != std::string::npos);
  CHECK(imp.out.find("gpu_model H100-SXM5-80GB") != std::string::npos);
  calib::Measurements m;
  calib::load_measurements(meas, m);
  REQUIRE(m.collectives.size() == 50);
  for (const auto& r : m.collectives) {
    CHECK(r.ranks == 80);
    CHECK(r.nodes == 10);
    CHECK(r.gpus_per_node == 8);
  }
  CHECK(m.provenance[0]["gpu_model"] == "H100-SXM5-80GB");
  CHECK(m.provenance[0]["logs"][0]["sections"].size() == 5);
  CHECK(m.provenance[0]["logs"][0]["sections"][1]["test"] == "all_gather_perf");

  // The provenance's gpu_model picks the base profile: no --base needed.
  const std::string a100 =
      std::string(ZEROSIM_SOURCE_DIR) +
      "/tests/calibrate/data/real/azure-1node/nccl-tests-a100-allreduce-train.log";
  std::string meas_a100 = (d / "a100.jsonl").string();
  Run imp_a100 = run("calibrate import-nccl-tests " + a100 + " --out " + meas_a100);
  CAPTURE(imp_a100.out);
  REQUIRE(imp_a100.code == 0);
  CHECK(imp_a100.out.find("12 all_reduce records from 1 log(s), gpu_model A100-SXM4-80GB") !=
        std::string::npos);
  Run fit = run("calibrate fit " + meas_a100 + " --cluster dgx-a100 --quiet --out " + prof);
  CAPTURE(fit.out);
  CHECK(fit.code == 0);
  CHECK(fit.out.find("base 'dgx-a100'") != std::string::npos);

  // --op filters, with a note per section left out.
  Run ag = run("calibrate import-nccl-tests " + log + " --op all_gather --out " + meas);
  CAPTURE(ag.out);
  REQUIRE(ag.code == 0);
  CHECK(ag.out.find("10 all_gather records") != std::string::npos);
  CHECK(ag.out.find(
            "note: " + log +
            ":2: all_reduce_perf section (10 all_reduce row(s)) left out by --op all_gather") !=
        std::string::npos);
  std::filesystem::remove_all(d);
}

TEST_CASE("import-nccl-tests: no op for a file, and a filter that leaves nothing, exit 2") {
  auto d = tmpdir();
  std::string nameless = (d / "run-7.log").string(), meas = (d / "m.jsonl").string();
  {
    std::ofstream f(nameless);
    f << "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      << "        1024   256  float  sum  -1   20.0  0.05  0.05  0  20.0  0.05  0.05  0\n";
  }
  Run r = run("calibrate import-nccl-tests " + nameless + " --out " + meas);
  CHECK(r.code == 2);
  CHECK(r.out.find(nameless) != std::string::npos);
  CHECK(r.out.find("pass --op") != std::string::npos);
  CHECK(!std::filesystem::exists(meas));
  CHECK(run("calibrate import-nccl-tests " + nameless + " --op all_reduce --out " + meas).code ==
        0);

  const std::string n2 =
      std::string(ZEROSIM_SOURCE_DIR) +
      "/tests/calibrate/data/real/h100-10nodes/nccl_N2_G1_cnode3-002_cnode3-003.log";
  Run f = run("calibrate import-nccl-tests " + n2 + " --op all_gather --out " +
              (d / "f.jsonl").string());
  CHECK(f.code == 2);
  CHECK(f.out.find(n2) != std::string::npos);
  CHECK(f.out.find("no all_gather rows") != std::string::npos);
  CHECK(!std::filesystem::exists(d / "f.jsonl"));
  std::filesystem::remove_all(d);
}
