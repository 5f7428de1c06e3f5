// `zerosim simulate` through the real binary: bad input exits 2 with a message naming the flag or
// file and the rule; the issue's reference command prints the result keys; --out and --trace write
// files.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sim/core/json_io.hpp"

namespace {

struct Run {
  int code = -1;
  std::string output;  // stdout and stderr
};

Run run(const std::string& args) {
  const std::string cmd = std::string(ZEROSIM_CLI) + " simulate " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kPaper = "--cluster dgx2-v100 --nodes 24 --model gpt-18b ";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("zerosim_step_" + name)).string();
}

}  // namespace

TEST_CASE("unknown strategy component: exit 2 naming it") {
  auto r = run(kPaper + "--strategy zero3+qwz+turbo --tokens-per-gpu 1024");
  CHECK(r.code == 2);
  CHECK(r.output.find("--strategy") != std::string::npos);
  CHECK(r.output.find("unknown strategy component 'turbo'") != std::string::npos);
}

TEST_CASE("hpZ group not dividing the world: exit 2") {
  auto r = run(kPaper + "--strategy zeropp --hpz-size 5 --tokens-per-gpu 1024");
  CHECK(r.code == 2);
  CHECK(r.output.find("--hpz-size") != std::string::npos);
  CHECK(r.output.find("must divide the world size 384") != std::string::npos);
}

TEST_CASE("DeepSpeed stage 2 with ZeRO++ keys: exit 2 naming the file and key") {
  const auto path = temp_path("ds_stage2.json");
  std::ofstream(path) << R"({"train_micro_batch_size_per_gpu": 2, "fp16": {"enabled": true},
    "zero_optimization": {"stage": 2, "zero_quantized_weights": true}})";
  auto r = run(kPaper + "--deepspeed " + path);
  CHECK(r.code == 2);
  CHECK(r.output.find(path) != std::string::npos);
  CHECK(r.output.find("/zero_optimization/stage") != std::string::npos);
  CHECK(r.output.find("needs stage 3") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a DeepSpeed stage-3 config drives the step") {
  const auto path = temp_path("ds_zeropp.json");
  std::ofstream(path) << R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
    "fp16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_quantized_weights": true,
    "zero_hpz_partition_size": 16, "zero_quantized_gradients": true, "reduce_bucket_size": 1e7}})";
  auto r = run(kPaper + "--deepspeed " + path + " --json");
  CHECK(r.code == 0);
  auto j = zerosim::parse_json_text(r.output, "stdout");
  CHECK(j["scenario"]["strategy"]["name"] == "zeropp");
  CHECK(j["scenario"]["tokens_per_gpu"] == 1024);
  std::filesystem::remove(path);
}

TEST_CASE("tokens per GPU not a multiple of the sequence length: exit 2") {
  auto r = run(kPaper + "--strategy zero3 --tokens-per-gpu 1000");
  CHECK(r.code == 2);
  CHECK(r.output.find("--tokens-per-gpu") != std::string::npos);
  CHECK(r.output.find("1000 is not a whole number of 512-token sequences") != std::string::npos);
  CHECK(r.output.find("512 or 1024 (--micro-batch 1 or 2)") != std::string::npos);
}

TEST_CASE("the reference command prints the result keys; --out and --trace write files") {
  const auto out = temp_path("result.json"), trace = temp_path("trace.json");
  auto r =
      run("--cluster dgx2-v100 --nodes 24 --nics-per-node 1 --nic-gbps 100 --model gpt-18b "
          "--strategy zeropp --tokens-per-gpu 1024 --json --out " +
          out + " --trace " + trace);
  REQUIRE(r.code == 0);
  auto j = zerosim::parse_json_text(r.output, "stdout");
  for (const char* k : {"schema_version", "step_time_s", "tflops_per_gpu", "tokens_per_s"})
    CHECK(j.contains(k));
  CHECK(j["memory"].contains("peak_bytes_per_gpu"));
  CHECK(j["memory"].contains("fits"));
  CHECK(j["comm"].contains("inter_node_bytes"));
  CHECK(j["comm"].contains("intra_node_bytes"));
  CHECK(j["breakdown"].contains("exposed_comm_s"));
  CHECK(zerosim::load_json_file(out) == j);
  auto t = zerosim::load_json_file(trace);
  std::set<int> tids;
  int x = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      ++x;
      CHECK(e["pid"] == 0);
      tids.insert(e["tid"].get<int>());
    }
  CHECK(x > 100);
  CHECK(tids.size() >= 3);  // compute, allgather, reduce
  std::filesystem::remove(out);
  std::filesystem::remove(trace);
}

TEST_CASE("the human summary is the default") {
  auto r = run(kPaper + "--strategy zero3 --tokens-per-gpu 1024");
  CHECK(r.code == 0);
  CHECK(r.output.find("TFLOPs/GPU") != std::string::npos);
  CHECK(r.output.find("step time") != std::string::npos);
}

TEST_CASE("a configuration that does not fit: the result is printed and written, then exit 2") {
  const auto out = temp_path("no_fit.json"), trace = temp_path("no_fit_trace.json");
  std::filesystem::remove(out);
  std::filesystem::remove(trace);
  // gpt-138b's ZeRO-3 model states (16 bytes a parameter over 16 GPUs) exceed a V100 on one DGX-2
  // node; more nodes shard them: the error names --nodes with the count that fits.
  auto r =
      run("--cluster dgx2-v100 --nodes 1 --model gpt-138b --strategy zero3 --tokens-per-gpu "
          "1024 --out " +
          out + " --trace " + trace);
  CHECK(r.code == 2);
  CHECK(r.output.find("step time") != std::string::npos);  // the summary came first
  CHECK(r.output.find("DOES NOT FIT") != std::string::npos);
  CHECK(r.output.find("--nodes: the configuration does not fit in GPU memory: it needs") !=
        std::string::npos);
  CHECK(r.output.find("nodes would fit it") != std::string::npos);
  auto j = zerosim::load_json_file(out);
  CHECK(j["memory"]["fits"] == false);
  CHECK(j["memory"]["peak_bytes_per_gpu"].get<double>() >
        j["memory"]["capacity_bytes"].get<double>());
  CHECK(std::filesystem::file_size(trace) > 0);
  std::filesystem::remove(out);
  std::filesystem::remove(trace);
}

TEST_CASE("a configuration no node count can fit is refused before anything is built or written") {
  const auto out = temp_path("never_fits.json");
  std::filesystem::remove(out);
  // ZeRO-1 keeps gpt-18b's whole FP16 weights and gradients on every GPU (2 x 34.3 GiB), more
  // than a V100 holds however many nodes: the error names --strategy, and no result is written.
  auto r =
      run("--cluster dgx2-v100 --nodes 1 --model gpt-18b --strategy zero1 --tokens-per-gpu 1024 "
          "--out " +
          out);
  CHECK(r.code == 2);
  CHECK(r.output.find("step time") == std::string::npos);
  CHECK(r.output.find("--strategy: the configuration does not fit in GPU memory on any number of "
                      "nodes") != std::string::npos);
  CHECK(r.output.find("ZeRO-3 shards more") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}
