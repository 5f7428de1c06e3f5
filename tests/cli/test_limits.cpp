// The README's limits table, each limit at its edge: at the limit the command runs (exit 0) within
// a bound of the time the table states, and one past it is refused (exit 2) in under a second,
// naming the flag and the limit, before the work it bounds (a cluster's size before it is built).
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <string>

#include "calibrate/fit/measurements.hpp"
#include "sim/core/json_io.hpp"
#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"
#include "tests/support/sanitizers.hpp"

namespace {

struct Timed {
  CliRun run;
  double seconds;
};

Timed timed(const std::string& args) {
  const auto start = std::chrono::steady_clock::now();
  CliRun r = run(args);
  return {std::move(r),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// One past a limit: exit 2 in under a second with every fragment in the message.
void refused_at_once(const std::string& args, std::initializer_list<const char*> fragments) {
  const Timed t = timed(args);
  INFO(args << "\n" << t.run.out);
  CHECK(t.run.rc == 2);
  CHECK(t.seconds < 1.0);
  for (const char* f : fragments) CHECK(t.run.out.find(f) != std::string::npos);
}

// Refused: exit 2 with every fragment in the message (what is checked, not how fast).
void refused(const std::string& args, std::initializer_list<const char*> fragments) {
  const CliRun r = run(args);
  INFO(args << "\n" << r.out);
  CHECK(r.rc == 2);
  for (const char* f : fragments) CHECK(r.out.find(f) != std::string::npos);
}

// `calibrate fit` at its limit of 1000 records: the time the README states.
constexpr double kFitAtLimitSeconds = 10;

// At a limit: runs, and the children's peak memory so far stays below 1 GB. Its time is reported,
// not asserted (speed is measured by bench/, and a shared CI machine's load varies); the README
// states the time measured. Under a sanitizer the runs are skipped: their time and memory are the
// instrumentation's.
using zerosim::testing::kSanitized;
void runs_within(const std::string& args, double stated_s) {
  if (kSanitized) {
    MESSAGE("skipped under a sanitizer: " << args);
    return;
  }
  const Timed t = timed(args + " >/dev/null");
  INFO(args << "\n" << t.run.out);
  CHECK(t.run.rc == 0);
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  CHECK(usage.ru_maxrss < 1024 * 1024);  // KiB
  MESSAGE(args << ": " << t.seconds << " s (the README states " << stated_s << " s)");
}

}  // namespace

TEST_CASE(
    "GPUs per scenario: 131072 on either tier unless the cluster folds on whole leaf blocks") {
  runs_within(
      "simulate --cluster dgx-h100 --nodes 16384 --model gpt-18b --strategy zeropp "
      "--tokens-per-gpu 1024",
      0.7);
  runs_within("simulate --cluster dgx-h100 --nodes 16384 --model gpt-18b --tier analytic", 0.4);
  // Past 131072 GPUs a cluster of a partial leaf block is refused on either tier (every node
  // would be simulated: 131071 dgx-h100 nodes took 28 s and 3 GB), by every command that runs
  // one; one node past 2^20 GPUs on a whole number of blocks too.
  refused_at_once("simulate --cluster dgx2-v100 --nodes 8193 --model gpt-18b",
                  {"--nodes", "131088 GPUs", "above 131072 GPUs the flow tier needs whole 32-node",
                   "8193 is not a multiple of 32"});
  refused_at_once("simulate --cluster dgx2-v100 --nodes 8193 --model gpt-18b --tier analytic",
                  {"--nodes", "131088 GPUs", "the analytic tier needs whole 32-node leaf blocks"});
  refused_at_once("simulate --cluster dgx-h100 --nodes 131071 --model gpt-18b",
                  {"--nodes", "1048568 GPUs", "131071 is not a multiple of 32"});
  refused_at_once("simulate --cluster dgx2-v100 --nodes 65537 --model gpt-18b",
                  {"--nodes", "1048592 GPUs", "the flow tier's limit of 1048576"});
  refused_at_once("simulate --cluster dgx-h100 --nodes 131073 --model gpt-18b --tier analytic",
                  {"--nodes", "1048584 GPUs", "the analytic tier's limit of 1048576"});
  refused_at_once("topology --cluster dgx2-v100 --nodes 65537",
                  {"--nodes", "1048592 GPUs", "a cluster's limit of 1048576"});
  refused_at_once("sweep --cluster dgx2-v100 --nodes 2,8193 --model gpt-18b --tier analytic",
                  {"--nodes", "needs whole 32-node leaf blocks"});
  // plan runs hundreds of steps of the cluster: 131072 GPUs, whole leaf blocks or not.
  refused_at_once("plan --cluster dgx2-v100 --nodes 8193 --model gpt-18b",
                  {"--nodes", "131088 GPUs, more than a plan's limit of 131072"});
  refused_at_once("plan --cluster dgx-h100 --nodes 131072 --model gpt-18b --confirm 0",
                  {"--nodes", "1048576 GPUs, more than a plan's limit of 131072"});
  refused_at_once(
      "collective --cluster dgx2-v100 --nodes 8193 --op all_gather --bytes 1MiB "
      "--tier analytic",
      {"--nodes", "the analytic tier needs whole 32-node leaf blocks"});
  // A fat-tree's leaf takes 32 NICs: 4 DGX H100 nodes of 8 NICs a block.
  refused_at_once(
      "simulate --cluster dgx-h100 --nodes 16386 --fabric fat-tree --model gpt-18b --tier analytic",
      {"--nodes", "needs whole 4-node leaf blocks", "16386 is not a multiple of 4"});
}

TEST_CASE("--seq-len 2^24 on each tier's largest cluster: refused before the cluster is built") {
  // No node count fits its activations: refused from the preset's shape, before the cluster (a
  // 131072-GPU one took 39 s and 400 MB; 2^20 GPUs 2.3 GB), its lowering or its network exist.
  refused_at_once("simulate --cluster dgx-h100 --nodes 131072 --model gpt-18b --seq-len 16777216",
                  {"--seq-len", "on any number of nodes", "shorter sequences can"});
  refused_at_once(
      "simulate --cluster dgx-h100 --nodes 131072 --model gpt-18b --seq-len 16777216 --tier "
      "analytic",
      {"--seq-len", "on any number of nodes"});
}

TEST_CASE("sweep and plan: what no node count fits is refused, named, the others run") {
  // 2^24-token sequences fit on no node count: the sweep lists that scenario, with the flag and
  // the rule, and runs the other; the plan, where every candidate is such, is refused at once.
  const ScratchDir d("limits-unfit");
  const std::string out = d / "s.json";
  refused(
      "sweep --cluster dgx-h100 --nodes 2 --model gpt-18b --strategy zeropp --tier analytic "
      "--seq-len 2048,16777216 --out " +
          out,
      {"scenario #1", "not run", "--seq-len", "does not fit in GPU memory on any number of nodes",
       "shorter sequences can", "1 of 2 scenarios are bad input"});
  const auto doc = zerosim::load_json_file(out);
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["memory"]["fits"] == true);
  REQUIRE(doc["invalid"].size() == 1);
  CHECK(doc["invalid"][0]["index"] == 1);
  refused("plan --cluster dgx-h100 --nodes 4096 --model gpt-18b --seq-len 16777216",
          {"--seq-len", "no configuration of the 276 searched fits", "on any number of nodes",
           "shorter sequences can"});
}

TEST_CASE("collective: all_to_all over at most 1024 ranks; --ranks at least 2") {
  runs_within(
      "collective --cluster dgx-h100 --nodes 128 --op all_to_all --bytes 1GiB --tier analytic",
      6.9);
  refused_at_once("collective --cluster dgx-h100 --nodes 129 --op all_to_all --bytes 1GiB",
                  {"--nodes", "1032 ranks, more than its limit of 1024"});
  refused_at_once("collective --cluster dgx-h100 --nodes 512 --op all_to_all --bytes 1GiB",
                  {"--nodes", "limit of 1024"});
  refused_at_once(
      "collective --cluster dgx-h100 --nodes 200 --op all_to_all --bytes 1GiB "
      "--ranks 1025",
      {"--ranks", "limit of 1024"});
  refused_at_once("collective --cluster dgx-h100 --nodes 1 --op all_gather --bytes 1MiB --ranks 1",
                  {"--ranks", "must be at least 2, not '1'"});
}

TEST_CASE("collective: sizes x flows per size at most 2^25, refused before the first size runs") {
  // A 1024-rank all_to_all has 1024 x 1023 flows: 32 sizes (1 B to 2 GiB at -f 2) fit the limit,
  // 33 do not. The refusal comes before any size is simulated (each takes about 1.5 s there).
  runs_within(
      "collective --cluster dgx-h100 --nodes 128 --op all_to_all --min-bytes 1 --max-bytes 2GiB "
      "--tier analytic",
      51);
  refused_at_once(
      "collective --cluster dgx-h100 --nodes 128 --op all_to_all --min-bytes 1 --max-bytes 4GiB",
      {"--max-bytes", "33 sizes of 1047552 flows each (1024 ranks)",
       "exceed the limit of 33554432 flows over all sizes"});
}

TEST_CASE("sweep: more than 100000 scenarios refused before any value is checked or run") {
  // 317 x 316 = 100172 scenarios; every value is a model file that does not exist, so the
  // refusal names the size, not a value (the values are checked after the size).
  std::string models, nodes;
  for (int i = 0; i < 317; ++i)
    models += (i ? "," : "") + std::string("no-such-model-") + std::to_string(i);
  for (int i = 1; i <= 316; ++i) nodes += (i > 1 ? "," : "") + std::to_string(i);
  refused_at_once(
      "sweep --cluster dgx-h100 --nodes " + nodes + " --model " + models + " --tier analytic",
      {"the sweep exceeds 100000 scenarios"});
}

TEST_CASE("calibrate fit: at most 1000 records, refused before any is parsed") {
  const ScratchDir dir("limits_fit");
  const std::string log =
      std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt";
  const std::string one = dir / "one.jsonl";
  REQUIRE(run("calibrate import-nccl-tests '" + log + "' --out '" + one + "'").rc == 0);
  // The log's records repeated up to the limit, and one more.
  std::ifstream in(one);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> records;
  while (std::getline(in, line)) records.push_back(line);
  REQUIRE(!records.empty());
  const auto write = [&](const std::string& path, std::size_t n) {
    std::ofstream out(path);
    out << header << '\n';
    for (std::size_t i = 0; i < n; ++i) out << records[i % records.size()] << '\n';
  };
  const std::size_t limit = zerosim::calib::kMaxMeasurementRecords;
  write(dir / "at.jsonl", limit);
  write(dir / "past.jsonl", limit + 1);
  // At the limit the fit runs (the README states its time on this input).
  runs_within("calibrate fit '" + (dir / "at.jsonl") + "' --base dgx-a100 --cluster dgx-a100 " +
                  "--quiet --out '" + (dir / "at.json") + "'",
              kFitAtLimitSeconds);
  refused_at_once("calibrate fit '" + (dir / "past.jsonl") + "' --base dgx-a100 --out '" +
                      (dir / "past.json") + "'",
                  {"past.jsonl", "1001 records, more than the limit of 1000"});
  // Across files: the limit counts them together.
  const CliRun two = run("calibrate fit '" + (dir / "at.jsonl") + "' '" + one +
                         "' --base dgx-a100 --out '" + (dir / "two.json") + "'");
  CHECK(two.rc == 2);
  CHECK(two.out.find("after 1000 read before") != std::string::npos);
}

TEST_CASE("plan: the global batch's accumulation is computed in 64 bits and bounded") {
  // 2^35 sequences on 16 GPUs need 2^31 / micro-batch steps: once wrapped to a negative int
  // and blamed on --grad-accum, a flag never given.
  refused_at_once(
      "plan --cluster dgx-h100 --nodes 2 --model gpt-18b --confirm 0 --global-batch 34359738368 "
      "--micro-batches 1,2",
      {"--global-batch", "1073741824 accumulation steps, more than the limit of 1000000000"});
  const CliRun r = run(
      "plan --cluster dgx-h100 --nodes 2 --model gpt-18b --confirm 0 --global-batch 1099511627777");
  CHECK(r.rc == 2);
  CHECK(r.out.find("--global-batch") != std::string::npos);
  CHECK(r.out.find("--grad-accum") == std::string::npos);
}

TEST_CASE("flag ranges read as ranges, and a quoted input is cut at 256 bytes") {
  refused_at_once(
      "collective --cluster dgx-h100 --nodes 1 --op all_gather --bytes 1MiB --gpus-per-node 0",
      {"--gpus-per-node", "must be at least 1, not '0'"});
  refused_at_once("report x.json --gpu-hour-price nan", {"--gpu-hour-price", "finite"});
  refused_at_once("report x.json --gpu-hour-price inf", {"--gpu-hour-price", "finite"});
  const CliRun r = run("topology --cluster " + std::string(5000, 'x'));
  CHECK(r.rc == 2);
  CHECK(r.out.size() < 1024);
  CHECK(r.out.find(std::string(257, 'x')) == std::string::npos);
  const CliRun n =
      run("simulate --cluster dgx-h100 --model gpt-18b --nodes " + std::string(5000, '9'));
  CHECK(n.rc == 2);
  CHECK(n.out.size() < 1024);
}
