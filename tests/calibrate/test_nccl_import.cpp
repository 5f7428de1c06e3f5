// nccl-tests importer: the representative fixture's rows, ranks and hosts; text variants (old
// 'error' column, N/A, NCCL INFO chatter); -J JSON; and every bad-log rule with file:line and
// column.
#include <doctest/doctest.h>

#include <string>

#include "calibrate/fit/nccl_tests.hpp"
#include "sim/core/error.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::calib;

namespace {

const std::string kFixture =
    std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt";

NcclTestsOptions op(const std::string& name, int ranks = 0) {
  NcclTestsOptions o;
  o.op = name;
  o.ranks = ranks;
  return o;
}

void expect_bad(const std::string& text, const NcclTestsOptions& o, const std::string& file,
                const std::string& path, const std::string& rule_part) {
  expect_input_error([&] { parse_nccl_tests(text, "log.txt", o); }, file, path, rule_part);
}

}  // namespace

TEST_CASE("the fixture: 31 rows, 8 ranks from the Rank lines, one host") {
  NcclTestsLog log = load_nccl_tests(kFixture, op("all_reduce"));
  REQUIRE(log.records.size() == 31);
  CHECK(log.ranks_in_log == 8);
  CHECK(log.hosts == std::vector<std::string>{"dgx-a100-01"});
  CHECK(log.header.find("nGpus 8") != std::string::npos);
  const auto& first = log.records.front();
  CHECK(first.bytes == 8);
  CHECK(first.time_s == doctest::Approx(11.29e-6));
  CHECK(first.ranks == 8);
  CHECK(first.nodes == 1);
  CHECK(first.tier == "intra_node");
  const auto& last = log.records.back();
  CHECK(last.bytes == 8589934592ull);
  CHECK(last.time_s == doctest::Approx(62641e-6));
  // busbw = algbw * 2(n-1)/n, as the log's own column says (239.98).
  CHECK(last.busbw_GBps == doctest::Approx(239.98).epsilon(0.001));
  NcclTestsOptions in_place = op("all_reduce");
  in_place.in_place = true;
  CHECK(load_nccl_tests(kFixture, in_place).records.back().time_s == doctest::Approx(63741e-6));
}

TEST_CASE(
    "text variants: no root column, old float error column, N/A, NCCL INFO lines, nodes from "
    "hosts") {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor)\n"
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  2 on nodeB device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "nodeA:1:1 [0] NCCL INFO Bootstrap : Using eth0\n"
      "        1024           256     float    none    20.00    0.05    0.03  1e-07    20.00    "
      "0.05    0.03  1e-07\n"
      "        2048           512     float    none    21.00    0.10    0.05    N/A    21.00    "
      "0.10    0.05    N/A\n";
  NcclTestsLog log = parse_nccl_tests(text, "log.txt", op("all_gather"));
  REQUIRE(log.records.size() == 2);
  CHECK(log.records[0].ranks == 2);
  CHECK(log.records[0].nodes == 2);
  CHECK(log.records[0].tier == "inter_node");
  CHECK(log.records[1].time_s == doctest::Approx(21e-6));
  // Explicit --ranks / --nodes win.
  NcclTestsOptions o = op("all_gather", 16);
  o.nodes = 1;
  NcclTestsLog l2 = parse_nccl_tests(text, "log.txt", o);
  CHECK(l2.records[0].ranks == 16);
  CHECK(l2.records[0].tier == "intra_node");
}

TEST_CASE("-J JSON output") {
  std::string text = R"({"config": {"nGpus": 8}, "results": [
    {"size": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": -1,
     "out_of_place": {"time": 30.5, "algbw": 34.38, "busbw": 60.16, "nwrong": 0},
     "in_place": {"time": 31.0, "algbw": 33.8, "busbw": 59.2, "nwrong": 0}}]})";
  NcclTestsLog log = parse_nccl_tests(text, "log.json", op("all_reduce", 8));
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].time_s == doctest::Approx(30.5e-6));
  CHECK(log.records[0].where == "log.json:/results/0");
  try {
    parse_nccl_tests(text, "log.json", op("all_reduce"));
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.path() == "--ranks");
  }
  try {
    parse_nccl_tests(R"({"results": [{"size": 8, "out_of_place": {"algbw": 1}}]})", "log.json",
                     op("all_reduce", 8));
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.path() == "/results/0/out_of_place");
    CHECK(e.rule().find("time") != std::string::npos);
  }
}

TEST_CASE("bad logs name file:line and the column") {
  auto o = op("all_reduce", 8);
  expect_bad("# header\n        1024   256  float  sum  -1   20.00  0.05\n", o, "log.txt:2", "row",
             "columns");
  expect_bad("        1024   256  float  sum  -1   fast  0.05  0.09  0  20.0  0.05  0.09  0\n", o,
             "log.txt:1", "time", "not a non-negative number");
  expect_bad("        1024   256  float  sum  -1   20.0  0.05  0.09  3  20.0  0.05  0.09  0\n", o,
             "log.txt:1", "#wrong", "failed validation");
  expect_bad("        1024   256  float  sum  -1   0.00  0.05  0.09  0  20.0  0.05  0.09  0\n", o,
             "log.txt:1", "time", "positive");
  expect_bad("        1024   256  float  sum  -1   20.0  0.05  0.09  x  20.0  0.05  0.09  0\n", o,
             "log.txt:1", "#wrong", "not a count");
  expect_bad("# only comments\n#\n", o, "log.txt", "", "no nccl-tests result rows");
  expect_bad("        1024   256  float  sum  -1   20.0  0.05  0.09  0  20.0  0.05  0.09  0\n",
             op("all_reduce"), "log.txt", "--ranks", "Rank");
  expect_bad("{\"results\": [", o, "log.txt", "", "malformed JSON");
  CHECK_THROWS_AS(parse_nccl_tests("x", "log.txt", op("allreduce", 8)), InputError);
}
