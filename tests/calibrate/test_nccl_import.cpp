// nccl-tests importer: the representative fixture's rows, ranks and hosts; text variants (old
// 'error' column, N/A, NCCL INFO chatter); every real log under tests/calibrate/data/real/ with
// each row under its true op; --op filtering; ops from file names; GPU names; -J JSON (one or
// several collectives); `zerosim collective --json`; and every bad-log rule with file:line and
// column.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "calibrate/fit/nccl_tests.hpp"
#include "sim/core/error.hpp"
#include "tests/support/approx.hpp"
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
  CHECK(first.time_s == zerosim::testing::Approx(11.29e-6));
  CHECK(first.ranks == 8);
  CHECK(first.nodes == 1);
  CHECK(first.tier == "intra_node");
  const auto& last = log.records.back();
  CHECK(last.bytes == 8589934592ull);
  CHECK(last.time_s == zerosim::testing::Approx(62641e-6));
  // busbw = algbw * 2(n-1)/n, as the log's own column says (239.98).
  CHECK(last.busbw_GBps == zerosim::testing::Approx(239.98).epsilon(0.001));
  NcclTestsOptions in_place = op("all_reduce");
  in_place.in_place = true;
  CHECK(load_nccl_tests(kFixture, in_place).records.back().time_s ==
        zerosim::testing::Approx(63741e-6));
}

TEST_CASE(
    "text variants: no root column, old float error column, N/A, NCCL INFO lines, nodes from "
    "hosts") {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor)\n"
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  2 on nodeB device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "nodeA:1:1 [0] NCCL INFO Bootstrap : Using eth0\n"
      "        1024           128     float    none    20.00    0.05    0.03  1e-07    20.00    "
      "0.05    0.03  1e-07\n"
      "        2048           256     float    none    21.00    0.10    0.05    N/A    21.00    "
      "0.10    0.05    N/A\n";
  NcclTestsLog log = parse_nccl_tests(text, "log.txt", op("all_gather"));
  REQUIRE(log.records.size() == 2);
  CHECK(log.records[0].ranks == 2);
  CHECK(log.records[0].nodes == 2);
  CHECK(log.records[0].tier == "inter_node");
  CHECK(log.records[1].time_s == zerosim::testing::Approx(21e-6));
  // Explicit --ranks / --nodes win.
  CHECK(log.records[0].gpus_per_node == 1);
  CHECK(log.gpu_model == "H100-SXM5-80GB");
  NcclTestsOptions o = op("all_gather", 2);
  o.nodes = 1;
  NcclTestsLog l2 = parse_nccl_tests(text, "log.txt", o);
  CHECK(l2.records[0].ranks == 2);
  CHECK(l2.records[0].gpus_per_node == 2);
  CHECK(l2.records[0].tier == "intra_node");
  // A rank count that contradicts the count column is caught.
  expect_bad(text, op("all_gather", 16), "log.txt:5", "count", "does not match size");
}

TEST_CASE("-J JSON output") {
  std::string text = R"({"config": {"nGpus": 8}, "results": [
    {"size": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": -1,
     "out_of_place": {"time": 30.5, "algbw": 34.38, "busbw": 60.16, "nwrong": 0},
     "in_place": {"time": 31.0, "algbw": 33.8, "busbw": 59.2, "nwrong": 0}}]})";
  NcclTestsLog log = parse_nccl_tests(text, "log.json", op("all_reduce", 8));
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].time_s == zerosim::testing::Approx(30.5e-6));
  CHECK(log.records[0].where == "log.json:/results/0");
  CHECK(caught_input_error([&] { parse_nccl_tests(text, "log.json", op("all_reduce")); }).path() ==
        "--ranks");
  const auto e = caught_input_error([] {
    parse_nccl_tests(R"({"results": [{"size": 8, "out_of_place": {"algbw": 1}}]})", "log.json",
                     op("all_reduce", 8));
  });
  CHECK(e.path() == "/results/0/out_of_place");
  CHECK(e.rule().find("time") != std::string::npos);
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

namespace {

const std::string kReal = std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/real";

// What a real log holds: rows per op (every row of the log lands under one of these), ranks, nodes
// and the zerosim gpu_model of its device lines.
struct RealLog {
  std::map<std::string, int> rows;
  int ranks, nodes;
  std::string gpu_model;
};

std::map<std::string, int> five_ops(int n) {
  return {{"all_reduce", n},
          {"all_gather", n},
          {"reduce_scatter", n},
          {"all_to_all", n},
          {"send_recv", n}};
}

// Polaris: no section lines, the op is in the file name; 4 B to 1 GiB, size-0 rows skipped.
RealLog polaris(const std::string& op, int nodes) {
  return {{{op, 0}}, nodes * 4, nodes, "A100-SXM4-40GB"};
}

const std::map<std::string, RealLog>& real_logs() {
  static const std::map<std::string, RealLog> m = {
      {"h100-10nodes/nccl_N10_G1.log", {five_ops(10), 10, 10, "H100-SXM5-80GB"}},
      {"h100-10nodes/nccl_N10_G2.log", {five_ops(10), 20, 10, "H100-SXM5-80GB"}},
      {"h100-10nodes/nccl_N10_G8.log", {five_ops(10), 80, 10, "H100-SXM5-80GB"}},
      {"h100-10nodes/nccl_N1_G8_cnode3-002.log", {five_ops(10), 8, 1, "H100-SXM5-80GB"}},
      {"h100-10nodes/nccl_N2_G1_cnode3-002_cnode3-003.log",
       {{{"all_to_all", 3}, {"send_recv", 3}}, 2, 2, "H100-SXM5-80GB"}},
      {"h100-10nodes/nccl_N2_G8_cnode3-002_cnode3-003.log",
       {{{"all_to_all", 3}, {"send_recv", 3}}, 16, 2, "H100-SXM5-80GB"}},
      {"a100-polaris/nccl_2_18__n2.g4.2024-04-29-18-41-24__all_gather_output.dat.4",
       polaris("all_gather", 2)},
      {"a100-polaris/nccl_2_18__n2.g4.2024-04-29-18-41-24__all_reduce_output.dat.4",
       polaris("all_reduce", 2)},
      {"a100-polaris/nccl_2_18__n2.g4.2024-04-29-18-41-24__all_reduce_output.dat.5",
       polaris("all_reduce", 2)},
      {"a100-polaris/nccl_2_18__n2.g4.2024-04-29-18-41-24__alltoall_output.dat.5",
       polaris("all_to_all", 2)},
      {"a100-polaris/nccl_2_18__n8.g4.2024-04-29-18-14-00__all_gather_output.dat.4",
       polaris("all_gather", 8)},
      {"a100-polaris/nccl_2_18__n8.g4.2024-04-29-18-14-00__all_reduce_output.dat.4",
       polaris("all_reduce", 8)},
      {"a100-polaris/nccl_2_18__n8.g4.2024-04-29-18-14-00__all_reduce_output.dat.5",
       polaris("all_reduce", 8)},
      {"a100-polaris/nccl_2_18__n8.g4.2024-04-29-18-14-00__alltoall_output.dat.5",
       polaris("all_to_all", 8)},
      {"a100-polaris/nccl_2_21__n2.g4.2024-04-29-19-08-14__all_gather_output.dat.4",
       polaris("all_gather", 2)},
      {"a100-polaris/nccl_2_21__n2.g4.2024-04-29-19-08-14__all_reduce_output.dat.4",
       polaris("all_reduce", 2)},
      {"a100-polaris/nccl_2_21__n2.g4.2024-04-29-19-08-14__all_reduce_output.dat.5",
       polaris("all_reduce", 2)},
      {"a100-polaris/nccl_2_21__n2.g4.2024-04-29-19-08-14__alltoall_output.dat.5",
       polaris("all_to_all", 2)},
      {"a100-polaris/nccl_2_21__n256.g4.2024-04-29-19-19-41__all_gather_output.dat.4",
       polaris("all_gather", 256)},
      {"a100-polaris/nccl_2_21__n256.g4.2024-04-29-19-19-41__all_reduce_output.dat.4",
       polaris("all_reduce", 256)},
      {"a100-polaris/nccl_2_21__n256.g4.2024-04-29-19-19-41__all_reduce_output.dat.5",
       polaris("all_reduce", 256)},
      {"a100-polaris/nccl_2_21__n256.g4.2024-04-29-19-19-41__alltoall_output.dat.5",
       polaris("all_to_all", 256)},
      {"azure-1node/nccl-tests-a100-allreduce-train.log",
       {{{"all_reduce", 12}}, 8, 1, "A100-SXM4-80GB"}},
      {"azure-1node/nccl-tests-h200-allreduce-train.log",
       {{{"all_reduce", 12}}, 8, 1, "H200-SXM-141GB"}},
  };
  return m;
}

// Lines of a text log that look like result rows (first token an integer), size-0 ones apart.
std::pair<int, int> result_lines(const std::string& path) {
  std::ifstream in(path);
  int rows = 0, zero = 0;
  for (std::string line; std::getline(in, line);) {
    auto b = line.find_first_not_of(' ');
    if (b == std::string::npos || line[b] < '0' || line[b] > '9') continue;
    (line.compare(b, 2, "0 ") == 0 ? zero : rows)++;
  }
  return {rows, zero};
}

std::map<std::string, int> rows_per_op(const NcclTestsLog& log) {
  std::map<std::string, int> m;
  for (const auto& r : log.records) ++m[r.op];
  return m;
}

}  // namespace

TEST_CASE("every real log imports with each row under its true op") {
  int seen = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kReal)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::string rel = std::filesystem::relative(entry.path(), kReal).string();
    CAPTURE(rel);
    auto it = real_logs().find(rel);
    REQUIRE_MESSAGE(it != real_logs().end(), "a real log without expectations in this test");
    const RealLog& want = it->second;
    ++seen;
    NcclTestsLog log = load_nccl_tests(entry.path().string(), NcclTestsOptions{});
    auto [lines, zero] = result_lines(entry.path().string());
    CHECK(static_cast<int>(log.records.size()) == lines);  // no result row is dropped
    std::map<std::string, int> got = rows_per_op(log);
    for (const auto& kv : want.rows) {
      // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
      const auto& op = kv.first;
      const auto& n = kv.second;
      CAPTURE(op);
      if (n > 0)
        CHECK(got[op] == n);
      else
        CHECK(got[op] == lines);
    }
    CHECK(got.size() == want.rows.size());
    for (const auto& r : log.records) {
      CHECK(r.ranks == want.ranks);
      CHECK(r.nodes == want.nodes);
      CHECK(r.gpus_per_node == want.ranks / want.nodes);
      CHECK(r.tier == (want.nodes > 1 ? "inter_node" : "intra_node"));
    }
    CHECK(log.gpu_model == want.gpu_model);
    CHECK(static_cast<int>(log.hosts.size()) == want.nodes);
    if (zero > 0) {
      REQUIRE(!log.notes.empty());
      CHECK(log.notes.front().find(std::to_string(zero) + " row(s) of size 0") !=
            std::string::npos);
    }
  }
  CHECK(seen == static_cast<int>(real_logs().size()));
}

TEST_CASE("H100 10 nodes x 8: sections, the first all_gather row, in-place columns") {
  const std::string path = kReal + "/h100-10nodes/nccl_N10_G8.log";
  NcclTestsLog log = load_nccl_tests(path, NcclTestsOptions{});
  REQUIRE(log.sections.size() == 5);
  std::vector<std::string> tests;
  for (const auto& s : log.sections) tests.push_back(s.test);
  CHECK(tests == std::vector<std::string>{"all_reduce_perf", "all_gather_perf",
                                          "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf"});
  CHECK(log.sections[1].where == path + ":109");
  CHECK(log.sections[1].op == "all_gather");
  CHECK(log.sections[1].rows == 10);
  CHECK(log.sections[1].hosts.size() == 10);
  CHECK(log.sections[1].device == "NVIDIA H100 80GB HBM3");
  auto ag = std::find_if(log.records.begin(), log.records.end(),
                         [](const auto& r) { return r.op == "all_gather"; });
  REQUIRE(ag != log.records.end());
  CHECK(ag->bytes == 33553920u);
  CHECK(ag->busbw_GBps == zerosim::testing::Approx(48.57).epsilon(0.001));
  CHECK(ag->time_s == zerosim::testing::Approx(682.20e-6));
  CHECK(ag->where == path + ":199");
  // In-place: alltoall/sendrecv rows whose in-place #wrong is N/A are valid.
  NcclTestsOptions in_place;
  in_place.in_place = true;
  NcclTestsLog ip = load_nccl_tests(path, in_place);
  CHECK(ip.records.size() == 50);
  auto ag_ip = std::find_if(ip.records.begin(), ip.records.end(),
                            [](const auto& r) { return r.op == "all_gather"; });
  CHECK(ag_ip->time_s == zerosim::testing::Approx(672.05e-6));
  CHECK(log.header.find("nThread 1 nGpus 1") != std::string::npos);
}

TEST_CASE("--op filters; a filter that leaves nothing names the file and the rule") {
  const std::string g8 = kReal + "/h100-10nodes/nccl_N10_G8.log";
  NcclTestsLog ag = load_nccl_tests(g8, op("all_gather"));
  REQUIRE(ag.records.size() == 10);
  for (const auto& r : ag.records) CHECK(r.op == "all_gather");
  CHECK(std::count_if(ag.notes.begin(), ag.notes.end(), [](const std::string& n) {
          return n.find("left out by --op all_gather") != std::string::npos;
        }) == 4);
  // A section line wins over a contradicting --op: N2_G1 holds only alltoall and sendrecv.
  const std::string n2 = kReal + "/h100-10nodes/nccl_N2_G1_cnode3-002_cnode3-003.log";
  expect_input_error([&] { load_nccl_tests(n2, op("all_reduce")); }, n2, "--op",
                     "no all_reduce rows: the log holds alltoall_perf (" + n2 + ":2)");
  CHECK(load_nccl_tests(n2, op("send_recv")).records.size() == 3);
  // Without section lines --op names the rows, over the file name.
  const std::string pol =
      kReal + "/a100-polaris/nccl_2_21__n2.g4.2024-04-29-19-08-14__all_reduce_output.dat.4";
  for (const auto& r : load_nccl_tests(pol, op("all_reduce")).records) CHECK(r.op == "all_reduce");
}

TEST_CASE("a section line contradicting --op: the section wins, its rows are filtered out") {
  std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid  2 on nodeA device  1 [0x08] NVIDIA A100-SXM4-80GB\n"
      "        1024           128     float    none    -1   20.00    0.05    0.03  0  20.00    "
      "0.05    0.03  0\n";
  expect_input_error([&] { parse_nccl_tests(text, "all_reduce.log", op("all_reduce")); },
                     "all_reduce.log", "--op", "--op keeps only all_reduce rows");
  NcclTestsLog log = parse_nccl_tests(text, "all_reduce.log", NcclTestsOptions{});
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].op == "all_gather");  // not the file name's all_reduce
  CHECK(log.gpu_model == "A100-SXM4-80GB");
}

TEST_CASE("ops from file names; a log with no inferable op asks for --op") {
  CHECK(nccl_tests_op_from_file_name(
            "x/nccl_2_21__n256.g4.2024-04-29-19-19-41__alltoall_output.dat.5") == "all_to_all");
  CHECK(nccl_tests_op_from_file_name("AllReduce-run.log") == "all_reduce");
  CHECK(nccl_tests_op_from_file_name("rs_reducescatter.txt") == "reduce_scatter");
  CHECK(nccl_tests_op_from_file_name("sendrecv.log") == "send_recv");
  CHECK(nccl_tests_op_from_file_name("all_gather_perf.log") == "all_gather");
  CHECK(nccl_tests_op_from_file_name("allreduce/run.log").empty());  // the last component only
  CHECK(nccl_tests_op_from_file_name("allreduce_vs_allgather.log").empty());  // several
  CHECK(nccl_tests_op_from_test("alltoall_perf") == "all_to_all");
  CHECK(nccl_tests_op_from_test("broadcast_perf").empty());
  std::string text =
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  2 on nodeA device  1 [0x07] NVIDIA H100 80GB HBM3\n"
      "        1024           256     float    sum    -1   20.00    0.05    0.09  0  20.00    "
      "0.05    0.09  0\n";
  expect_input_error([&] { parse_nccl_tests(text, "run-7.log", NcclTestsOptions{}); }, "run-7.log",
                     "--op", "pass --op");
  CHECK(parse_nccl_tests(text, "run-7.log", op("all_reduce")).records.size() == 1);
  CHECK(parse_nccl_tests(text, "allreduce-7.log", NcclTestsOptions{}).records[0].op ==
        "all_reduce");
  // The count column catches a file name naming the wrong collective.
  expect_input_error([&] { parse_nccl_tests(text, "allgather-7.log", NcclTestsOptions{}); },
                     "allgather-7.log:3", "count", "does not match size");
}

TEST_CASE("sections zerosim has no op for are skipped with a note; any type name") {
  std::string text =
      "# Collective test starting: broadcast_perf\n"
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H200 NVL\n"
      "#  Rank  1 Group  0 Pid  2 on nodeA device  1 [0x07] NVIDIA H200 NVL\n"
      "        1024           256     float    none     0   20.00    0.05    0.05  0  20.00    "
      "0.05    0.05  0\n"
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA H200 NVL\n"
      "#  Rank  1 Group  0 Pid  2 on nodeA device  1 [0x07] NVIDIA H200 NVL\n"
      "        1024           512  bfloat16     sum    -1   20.00    0.05    0.05  0  20.00    "
      "0.05    0.05  0\n"
      "        4096           512    double     sum    -1   21.00    0.20    0.20  0  21.00    "
      "0.20    0.20  0\n"
      "        4096          4096  fp8_e4m3     sum    -1   21.00    0.20    0.20  0  21.00    "
      "0.20    0.20  0\n"
      "        4096             3    mytype     sum    -1   21.00    0.20    0.20  0  21.00    "
      "0.20    0.20  0\n";
  NcclTestsLog log = parse_nccl_tests(text, "mixed.log", NcclTestsOptions{});
  CHECK(log.records.size() == 4);
  for (const auto& r : log.records) CHECK(r.op == "all_reduce");
  REQUIRE(!log.notes.empty());
  CHECK(log.notes.front().find("mixed.log:1: broadcast_perf section skipped (1 row(s))") !=
        std::string::npos);
  CHECK(log.gpu_model == "H200-SXM-141GB");
  expect_input_error(
      [&] {
        parse_nccl_tests(text.substr(0, text.find("# Collective test starting: all_reduce")),
                         "bc.log", NcclTestsOptions{});
      },
      "bc.log", "", "broadcast");
  expect_bad("        1024   256  9float  sum  -1   20.0  0.05  0.09  0  20.0  0.05  0.09  0\n",
             op("all_reduce", 8), "log.txt:1", "type", "data type");
}

TEST_CASE("GPU names map to zerosim gpu_model strings") {
  CHECK(nccl_tests_gpu_model("NVIDIA H100 80GB HBM3") == "H100-SXM5-80GB");
  CHECK(nccl_tests_gpu_model("NVIDIA A100-SXM4-80GB") == "A100-SXM4-80GB");
  CHECK(nccl_tests_gpu_model("NVIDIA A100-SXM4-40GB") == "A100-SXM4-40GB");
  CHECK(nccl_tests_gpu_model("NVIDIA H200") == "H200-SXM-141GB");
  CHECK(nccl_tests_gpu_model("NVIDIA H200 NVL") == "H200-SXM-141GB");
  CHECK(nccl_tests_gpu_model("Tesla V100-SXM3-32GB") == "V100-SXM3-32GB");
  CHECK(nccl_tests_gpu_model("Tesla V100-SXM3-32GB-H") == "V100-SXM3-32GB");
  CHECK(nccl_tests_gpu_model("Tesla V100-SXM2-32GB").empty());
  CHECK(nccl_tests_gpu_model("NVIDIA GeForce RTX 4090").empty());
  CHECK(nccl_tests_gpu_model("H100-SXM5-80GB") == "H100-SXM5-80GB");  // zerosim's own name
  CHECK(nccl_tests_gpu_model("").empty());
  // An unknown GPU is no error: the log imports with an empty gpu_model and a note.
  std::string text =
      "#  Rank  0 Group  0 Pid  1 on nodeA device  0 [0x07] NVIDIA GeForce RTX 4090\n"
      "        1024           256     float    sum    -1   20.00    0.05    0.09  0  20.00    "
      "0.05    0.09  0\n";
  NcclTestsLog log = parse_nccl_tests(text, "allreduce.log", NcclTestsOptions{});
  CHECK(log.gpu_model.empty());
  CHECK(log.device == "NVIDIA GeForce RTX 4090");
  CHECK(log.records[0].ranks == 1);
}

TEST_CASE("-J JSON: several collectives, devices, N/A, strict values") {
  std::string one = R"({"name": "all_gather_perf",
    "devices": [{"rank": 0, "hostname": "a", "name": "NVIDIA H100 80GB HBM3"},
                {"rank": 1, "hostname": "b", "name": "NVIDIA H100 80GB HBM3"}],
    "results": [{"size": 8192, "count": 1024, "type": "float",
      "out_of_place": {"time": 30.5, "algbw": 0.27, "busbw": 0.13, "wrong": 0},
      "in_place": {"time": 31.0, "algbw": 0.26, "busbw": 0.13, "wrong": "N/A"}},
      {"size": 0, "count": 0, "type": "float", "out_of_place": {"time": 1, "wrong": 0}}],
    "future_key": {"x": 1}})";
  std::string two = R"({"config": {"collective": "sendrecv_perf", "nranks": 2},
    "results": [{"size": 4096, "count": 1024, "type": "float",
      "out_of_place": {"time": 10.0, "nwrong": null}, "in_place": {"time": 11.0}}]})";
  for (const std::string& text : {one + "\n" + two, "[" + one + ", " + two + "]"}) {
    NcclTestsLog log = parse_nccl_tests(text, "log.json", NcclTestsOptions{});
    REQUIRE(log.records.size() == 2);
    CHECK(log.records[0].op == "all_gather");
    CHECK(log.records[0].ranks == 2);
    CHECK(log.records[0].nodes == 2);
    CHECK(log.records[1].op == "send_recv");
    CHECK(log.records[1].ranks == 2);
    CHECK(log.records[1].nodes == 1);
    CHECK(log.gpu_model == "H100-SXM5-80GB");
    NcclTestsOptions in_place;
    in_place.in_place = true;
    CHECK(parse_nccl_tests(text, "log.json", in_place).records[1].time_s ==
          zerosim::testing::Approx(11e-6));
    CHECK(parse_nccl_tests(text, "log.json", op("send_recv")).records.size() == 1);
  }
  NcclTestsLog cat = parse_nccl_tests(one + two, "log.json", NcclTestsOptions{});
  CHECK(cat.records[1].where == "log.json:/1/results/0");
  expect_input_error(
      [&] {
        parse_nccl_tests(R"({"results": [{"size": 8, "out_of_place": {"time": 1, "wrong": "x"}}]})",
                         "all_reduce.json", op("all_reduce", 2));
      },
      "all_reduce.json", "/results/0/out_of_place/wrong", "N/A");
  expect_input_error(
      [&] {
        parse_nccl_tests(R"({"results": [{"size": 8, "out_of_place": {"time": "1"}}]})",
                         "all_reduce.json", op("all_reduce", 2));
      },
      "all_reduce.json", "/results/0/out_of_place/time", "");
  expect_input_error(
      [&] {
        parse_nccl_tests(R"({"results": [{"size": 8, "count": 1, "type": "float",
            "out_of_place": {"time": 1}}]})",
                         "all_gather.json", op("all_gather", 4));
      },
      "all_gather.json", "/results/0/count", "does not match size");
}

TEST_CASE("zerosim collective --json imports; its console table is refused") {
  std::string text = R"({"schema_version": 1, "command": "collective", "cluster": "dgx-h100",
    "nodes": 4, "gpus_per_node": 8, "op": "all_gather", "ranks": 12, "tier": "flow",
    "gpu_model": "H100-SXM5-80GB",
    "rows": [{"size_bytes": 1048576, "count": 262144, "type": "float", "time_us": 20.5,
              "algbw_GBps": 51.15, "busbw_GBps": 46.9, "algorithm": "ring", "protocol": "simple"},
             {"size_bytes": 2097152, "count": 524288, "type": "float", "time_us": 35.0,
              "algbw_GBps": 59.9, "busbw_GBps": 54.9}],
    "avg_busbw_GBps": 50.9})";
  NcclTestsLog log = parse_nccl_tests(text, "pred.json", NcclTestsOptions{});
  REQUIRE(log.records.size() == 2);
  CHECK(log.records[0].op == "all_gather");
  CHECK(log.records[0].ranks == 12);
  CHECK(log.records[0].nodes == 2);  // ceil(12 / 8)
  CHECK(log.records[0].gpus_per_node == 8);
  CHECK(log.records[0].time_s == zerosim::testing::Approx(20.5e-6));
  CHECK(log.records[1].where == "pred.json:/rows/1");
  CHECK(log.gpu_model == "H100-SXM5-80GB");
  std::string spread = text;
  spread.replace(spread.find("\"tier\""), 6, "\"rank_nodes\": 3, \"tier\"");
  NcclTestsLog s = parse_nccl_tests(spread, "pred.json", NcclTestsOptions{});
  CHECK(s.records[0].nodes == 3);
  CHECK(s.records[0].gpus_per_node == 4);
  expect_input_error([&] { parse_nccl_tests(text, "pred.json", op("all_reduce")); }, "pred.json",
                     "--op", "no all_reduce rows");
  std::string bad = text;
  bad.replace(bad.find("20.5"), 4, "-1.0");
  expect_input_error([&] { parse_nccl_tests(bad, "pred.json", NcclTestsOptions{}); }, "pred.json",
                     "/rows/0/time_us", "");
  expect_input_error(
      [&] {
        parse_nccl_tests(R"({"command": "simulate", "rows": []})", "sim.json", NcclTestsOptions{});
      },
      "sim.json", "/command", "no collective measurements");
  expect_input_error(
      [&] {
        parse_nccl_tests(R"({"command": "collective", "op": "allgather", "ranks": 2,
            "gpus_per_node": 8, "rows": []})",
                         "z.json", NcclTestsOptions{});
      },
      "z.json", "/op", "unknown collective");
  // The console table (no --json / --nccl-tests) is refused with the way to import it.
  expect_input_error(
      [&] {
        parse_nccl_tests(
            "# zerosim collective: all_gather (ring), 16 ranks on 2 node(s)\n"
            "  size(B) count type time(us) algbw(GB/s) busbw(GB/s) algo proto\n"
            "  1024 16 float 29.44 0.03 0.03 ring LL\n",
            "table.txt", NcclTestsOptions{});
      },
      "table.txt", "", "--nccl-tests");
}

TEST_CASE("records carry gpus_per_node; measurement files read it strictly, optional") {
  NcclTestsLog log = load_nccl_tests(kReal + "/h100-10nodes/nccl_N10_G2.log", NcclTestsOptions{});
  std::string text =
      measurements_header(json::object()) + "\n" + to_json(log.records.front()).dump() + "\n";
  CHECK(text.find("\"gpus_per_node\":2") != std::string::npos);
  Measurements m;
  parse_measurements_text(text, "m.jsonl", m);
  REQUIRE(m.collectives.size() == 1);
  CHECK(m.collectives[0].gpus_per_node == 2);
  const std::string head = measurements_header(json::object()) + "\n";
  const std::string rec =
      R"({"kind": "collective", "op": "all_reduce", "ranks": 12, "nodes": 2, "bytes": 1024, )"
      R"("time_s": 1e-5)";
  Measurements absent;
  parse_measurements_text(head + rec + "}\n", "m.jsonl", absent);
  CHECK(absent.collectives[0].gpus_per_node == 6);  // ceil(ranks / nodes)
  for (const char* bad : {R"(, "gpus_per_node": 0})", R"(, "gpus_per_node": 5})",
                          R"(, "gpus_per_node": 13})", R"(, "gpus_per_node": "8"})"}) {
    CAPTURE(bad);
    Measurements out;
    expect_input_error([&] { parse_measurements_text(head + rec + bad + "\n", "m.jsonl", out); },
                       "m.jsonl:2", "/gpus_per_node", "");
  }
}

TEST_CASE("records carry the GPUs each benchmark thread drove (nccl-tests' nGpus), strictly") {
  // One thread driving 8 GPUs (the Azure node logs, the fixture), one process per GPU (the H100
  // cluster and Polaris, launched under MPI).
  for (const char* f : {"/azure-1node/nccl-tests-a100-allreduce-train.log",
                        "/azure-1node/nccl-tests-h200-allreduce-train.log"})
    CHECK(load_nccl_tests(kReal + f, NcclTestsOptions{}).records.front().gpus_per_thread == 8);
  CHECK(load_nccl_tests(kFixture, op("all_reduce")).records.front().gpus_per_thread == 8);
  const NcclTestsLog h100 =
      load_nccl_tests(kReal + "/h100-10nodes/nccl_N10_G2.log", NcclTestsOptions{});
  CHECK(h100.records.front().gpus_per_thread == 1);
  // Written only when more than one; read back strictly.
  const std::string head = measurements_header(json::object()) + "\n";
  const NcclTestsLog azure = load_nccl_tests(
      kReal + "/azure-1node/nccl-tests-h200-allreduce-train.log", NcclTestsOptions{});
  const std::string line = to_json(azure.records.front()).dump();
  CHECK(line.find("\"gpus_per_thread\":8") != std::string::npos);
  CHECK(to_json(h100.records.front()).dump().find("gpus_per_thread") == std::string::npos);
  Measurements m;
  parse_measurements_text(head + line + "\n", "m.jsonl", m);
  CHECK(m.collectives.at(0).gpus_per_thread == 8);
  const std::string rec =
      R"({"kind": "collective", "op": "all_reduce", "ranks": 8, "nodes": 2, "bytes": 1024, )"
      R"("time_s": 1e-5)";
  for (const char* bad : {R"(, "gpus_per_thread": 0})", R"(, "gpus_per_thread": 5})",
                          R"(, "gpus_per_thread": "2"})"}) {
    CAPTURE(bad);
    Measurements out;
    expect_input_error([&] { parse_measurements_text(head + rec + bad + "\n", "m.jsonl", out); },
                       "m.jsonl:2", "/gpus_per_thread", "");
  }
  // The text header's nGpus: a count, and no more than the ranks of one node.
  const std::string rows =
      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid 1 on a device  1 [0x07] NVIDIA A100-SXM4-80GB\n"
      "        1024           256     float     sum      -1    44.80    0.02    0.04      0    "
      "44.80    0.02    0.04      0\n";
  CHECK(parse_nccl_tests("# nThread 1 nGpus 2 minBytes 8\n" + rows, "log.txt", op("all_reduce"))
            .records.front()
            .gpus_per_thread == 2);
  expect_bad("# nThread 1 nGpus x minBytes 8\n" + rows, op("all_reduce"), "log.txt:1", "nGpus",
             "GPU count");
  expect_bad("# nThread 1 nGpus 4 minBytes 8\n" + rows, op("all_reduce"), "log.txt", "nGpus",
             "a thread drives GPUs of its own node");
  // -J JSON: the config's nGpus.
  const NcclTestsLog j = parse_nccl_tests(
      R"({"config": {"collective": "all_reduce_perf", "nranks": 2, "nGpus": 2},
          "results": [{"size": 1024, "out_of_place": {"time": 40.0}}]})",
      "log.json", NcclTestsOptions{});
  CHECK(j.records.front().gpus_per_thread == 2);
}
