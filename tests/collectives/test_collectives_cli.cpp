// `zerosim collective` end to end: bad input exits 2 naming the flag; the table's columns are
// consistent; busbw on DGX H100 lands where public nccl-tests results are.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "sim/collectives/collective.hpp"
#include "sim/core/json_io.hpp"
#include "tests/support/approx.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Run run_collective(const std::string& args) {
  Run r;
  const std::string cmd = std::string(ZEROSIM_CLI) + " collective " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool mentions(const Run& r, const std::string& what) {
  return r.out.find(what) != std::string::npos;
}

double busbw_GBps(const std::string& args) {
  const Run r = run_collective(args + " --json");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const auto j = zerosim::json::parse(r.out);
  REQUIRE(j.at("rows").size() == 1);
  return j.at("rows")[0].at("busbw_GBps").get<double>();
}

}  // namespace

TEST_CASE("bad input exits 2 with a message naming the flag") {
  Run r = run_collective("--cluster dgx-h100 --nodes 1 --op allgathr --bytes 1GiB");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--op"));
  CHECK(mentions(r, "unknown collective 'allgathr'"));
  CHECK(mentions(r, "did you mean 'allgather'?"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather --bytes 0");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--bytes"));
  CHECK(mentions(r, "positive"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather --ranks 9 --bytes 1MiB");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--ranks"));
  CHECK(mentions(r, "8 GPUs"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather --bytes 1MiB --min-bytes 1K");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--bytes"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--min-bytes"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather --algo two_hop --bytes 1MiB");
  CHECK(r.code == 2);
  CHECK(mentions(r, "/algorithm"));

  r = run_collective("--cluster dgx-h100 --nodes 1 --op all_gather --bytes 1MiB --tier packet");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--tier"));

  // nccl-tests' -g: a thread drives GPUs of its own node, as many on every node.
  r = run_collective(
      "--cluster dgx-h100 --nodes 2 --gpus-per-node 4 --op all_gather --bytes 1MiB "
      "--gpus-per-thread 3");
  CHECK(r.code == 2);
  CHECK(mentions(r, "--gpus-per-thread"));
  CHECK(mentions(r, "must divide the 4 rank(s) per node"));
}

TEST_CASE("--gpus-per-thread G: a call takes at least G of the profile's host launches") {
  // dgx-h100 launches one GPU's part of a call in nccl.host_launch_us = 3.8 us (the Azure H200
  // node's nccl-tests log): 8 GPUs on one thread take 30.4 us per call, above a 1 KiB all_reduce's
  // time on the GPUs; a 1 GiB one is not affected.
  auto time_us = [](const std::string& args) {
    const Run r = run_collective(
        "--cluster dgx-h100 --nodes 1 --op all_reduce --tier analytic "
        "--json " +
        args);
    REQUIRE_MESSAGE(r.code == 0, r.out);
    return zerosim::json::parse(r.out).at("rows")[0].at("time_us").get<double>();
  };
  const double one = time_us("--bytes 1KiB");
  CHECK(one < 30.4);
  CHECK(time_us("--bytes 1KiB --gpus-per-thread 8") == zerosim::testing::Approx(30.4));
  CHECK(time_us("--bytes 1GiB --gpus-per-thread 8") == time_us("--bytes 1GiB"));
}

TEST_CASE("size sweep: one row per size, algbw = size/time, busbw = algbw * nccl-tests factor") {
  const Run r = run_collective(
      "--cluster dgx-h100 --nodes 1 --op all_reduce --min-bytes 1MiB --max-bytes 8MiB --json");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const auto j = zerosim::json::parse(r.out);
  CHECK(j.at("op") == "all_reduce");
  CHECK(j.at("ranks") == 8);
  const auto& rows = j.at("rows");
  REQUIRE(rows.size() == 4);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const double size = row.at("size_bytes").get<double>();
    CHECK(size == static_cast<double>((1u << 20) << i));
    CHECK(row.at("count").get<double>() == size / 4);
    CHECK(row.at("type") == "float");
    const double t = row.at("time_us").get<double>() * 1e-6;
    CHECK(row.at("algbw_GBps").get<double>() == zerosim::testing::Approx(size / t / 1e9));
    CHECK(row.at("busbw_GBps").get<double>() ==
          zerosim::testing::Approx(row.at("algbw_GBps").get<double>() * 2 * 7 / 8));
  }
  const Run table = run_collective("--cluster dgx-h100 --nodes 1 --op all_reduce --bytes 1MiB");
  REQUIRE(table.code == 0);
  CHECK(mentions(table, "busbw(GB/s)"));
  CHECK(mentions(table, "1048576"));
}

// Public nccl-tests results on one DGX H100 (NVSwitch, NVLink4 450 GB/s per direction): ring
// all_gather busbw about 370 GB/s at 1 GiB. Asserted within 5%.
TEST_CASE("one DGX H100: all_gather 1GiB busbw near NCCL's ~370 GB/s") {
  const double busbw = busbw_GBps("--cluster dgx-h100 --nodes 1 --op all_gather --bytes 1GiB");
  CHECK(busbw >= 370 * 0.95);
  CHECK(busbw <= 370 * 1.05);
}

// 16 DGX H100 nodes, 8 x 400 Gbps NDR per node. all_to_all across nodes is network-bound: of each
// GPU's (n-1)/n*S counted by busbw, (n-N)/n*S crosses its NIC, so the NIC moves
// busbw * (n-N)/(n-1) bytes per second. Measured on 10 such nodes (shared/data h100-10nodes,
// nccl_N10_G8.log, alltoall at 16 GiB: busbw 50.38 GB/s of 80 ranks, 70 of 79 peers remote):
// 44.6 GB/s per NIC. The derived profile is asserted within 10% of it.
TEST_CASE("16 DGX H100 nodes with 8 x 400 Gbps: all_to_all moves about 44.6 GB/s per NIC") {
  const double busbw = busbw_GBps(
      "--cluster dgx-h100 --nodes 16 --nics-per-node 8 --nic-gbps 400 --op all_to_all --bytes "
      "1GiB");
  const double n = 128, N = 8;
  const double per_nic = busbw * (n - N) / (n - 1);
  CHECK(per_nic == zerosim::testing::Approx(50.38 * 70 / 79).epsilon(0.10));
}

// NCCL's choice per row, forced choices, and the nccl-tests text format read back by
// `calibrate import-nccl-tests` (every column, the Rank lines' GPU model and node count).
TEST_CASE("collective: algorithm and protocol per row, --algo/--proto, --nccl-tests round trip") {
  const Run table = run_collective(
      "--cluster dgx-h100 --nodes 2 --op all_reduce --min-bytes 1KiB --max-bytes 1GiB "
      "--step-factor 1024 --tier analytic");
  REQUIRE_MESSAGE(table.code == 0, table.out);
  CHECK(mentions(table, "algo"));
  CHECK(mentions(table, " LL"));     // 1 KiB: latency-bound, LL
  CHECK(mentions(table, "Simple"));  // 1 GiB: bandwidth-bound
  const Run forced = run_collective(
      "--cluster dgx-h100 --nodes 2 --op all_reduce --bytes 1MiB --algo ring --proto LL128 "
      "--tier analytic --json");
  REQUIRE_MESSAGE(forced.code == 0, forced.out);
  const auto f = zerosim::json::parse(forced.out);
  CHECK(f.at("rows")[0].at("algorithm") == "ring");
  CHECK(f.at("rows")[0].at("protocol") == "LL128");
  // NVLS is an all_reduce inside a node: refused for all_gather across nodes, exit 2 naming --algo.
  const Run bad =
      run_collective("--cluster dgx-h100 --nodes 2 --op all_gather --bytes 1MiB --algo nvls");
  CHECK(bad.code == 2);
  CHECK(mentions(bad, "--algo"));
  const Run p2p =
      run_collective("--cluster dgx-h100 --nodes 2 --op all_to_all --bytes 1MiB --proto LL");
  CHECK(p2p.code == 2);
  CHECK(mentions(p2p, "--proto"));

  const Run nt = run_collective(
      "--cluster dgx-h100 --nodes 2 --gpus-per-node 2 --op all_gather --min-bytes 1MiB "
      "--max-bytes 64MiB --step-factor 4 --gpus-per-thread 2 --nccl-tests");
  REQUIRE_MESSAGE(nt.code == 0, nt.out);
  CHECK(mentions(nt, "# Collective test starting: all_gather_perf"));
  CHECK(mentions(nt, "H100-SXM5-80GB"));
  char path[] = "/tmp/zerosim-nccl-tests-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, nt.out.data(), nt.out.size()) == static_cast<ssize_t>(nt.out.size()));
  close(fd);
  const std::string meas = std::string(path) + ".jsonl";
  const std::string cmd = std::string(ZEROSIM_CLI) + " calibrate import-nccl-tests " + path +
                          " --out " + meas + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  CHECK_MESSAGE(pclose(p) == 0, out);
  CHECK(out.find("4 all_gather records") != std::string::npos);
  CHECK(out.find("gpu_model H100-SXM5-80GB") != std::string::npos);
  std::string text;
  {
    FILE* m = std::fopen(meas.c_str(), "r");
    REQUIRE(m != nullptr);
    while (std::fgets(buf.data(), buf.size(), m) != nullptr) text += buf.data();
    std::fclose(m);
  }
  CHECK(text.find("\"ranks\":4") != std::string::npos);
  CHECK(text.find("\"nodes\":2") != std::string::npos);
  CHECK(text.find("\"gpus_per_node\":2") != std::string::npos);
  CHECK(text.find("\"gpus_per_thread\":2") != std::string::npos);
  std::remove(path);
  std::remove(meas.c_str());
}
