// StepResult and its JSON form: every golden result reads back and writes out byte for byte, the
// typed round trip is exact, and the reader refuses what docs/result-schema.json refuses.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "../support/files.hpp"
#include "../support/input_error.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/simulate.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(ZEROSIM_SOURCE_DIR) / "tests/golden/expected";

json golden(const char* name) { return parse_json_text(slurp(kGolden / name), name); }

StepResult read(const json& j) { return step_result_from_json(JsonReader(j, "r.json")); }

}  // namespace

TEST_CASE("every golden simulate result reads back and writes the same bytes") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kGolden)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("simulate-")) continue;
    CAPTURE(name);
    const std::string text = slurp(e.path());
    CHECK(to_json(read(parse_json_text(text, name))).dump(2) + "\n" == text);
    ++n;
  }
  CHECK(n >= 10);
  // The sweep's results too (keys, integer and float types kept).
  const json sweep = golden("sweep-dgx2-nics-strategies.json");
  for (const json& r : sweep.at("results")) CHECK(to_json(read(r)) == r);
}

TEST_CASE("the text writer writes to_json's dump, byte for byte, its parts reused across results") {
  StepResultText writer;  // one for every result: its memos see models and strategies repeat
  JsonTextWriter out;
  std::vector<StepResult> results;
  for (const auto& e : fs::directory_iterator(kGolden)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("simulate-")) results.push_back(read(golden(name.c_str())));
  }
  const json sweep = golden("sweep-dgx2-nics-strategies.json");  // held: the loop reads into it
  for (const json& r : sweep.at("results")) results.push_back(read(r));
  // An offloading DeepSpeed config and FSDP2 on a 2-D mesh (keys only they write).
  Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = "llama-3-8b";
  s.tier = NetworkTier::Analytic;
  s.deepspeed = std::string(ZEROSIM_SOURCE_DIR) +
                "/workloads/deepspeed/published/axolotl-zero3_bf16_cpuoffload_all.json";
  results.push_back(simulate(s));
  REQUIRE(results.back().has_offload);
  s.deepspeed.clear();
  s.strategy = "fsdp2";
  s.hsdp_size = 8;
  results.push_back(simulate(s));
  REQUIRE(results.size() >= 16);
  for (int pass = 0; pass < 2; ++pass)  // the second pass takes the memos' texts
    for (std::size_t i = 0; i < results.size(); ++i) {
      CAPTURE(i);
      out.clear();
      CHECK(writer.write(out, results[i]));
      CHECK(out.text() == to_json(results[i]).dump());
    }
  // A memory estimate that differs only by the sign of a zero is written apart, and a number that
  // is not finite is written null and reported.
  StepResult r = results.front();
  r.memory.components.front().second = 0.0;
  out.clear();
  CHECK(writer.write(out, r));
  r.memory.components.front().second = -0.0;
  out.clear();
  CHECK(writer.write(out, r));
  CHECK(out.text() == to_json(r).dump());
  r.memory.peak_bytes = std::numeric_limits<double>::infinity();
  out.clear();
  CHECK_FALSE(writer.write(out, r));
  CHECK(out.text() == to_json(r).dump());
  r = results.front();
  r.step_time_s = std::numeric_limits<double>::quiet_NaN();
  out.clear();
  CHECK_FALSE(writer.write(out, r));
  CHECK(out.text() == to_json(r).dump());
}

TEST_CASE("the typed round trip is exact, through text") {
  Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = "llama-3-8b";
  s.strategy = "zero3+qgz";
  s.grad_accum = 2;
  s.tier = NetworkTier::Analytic;
  StepResult r = simulate(s);
  r.warnings.push_back("a warning, carried through the text");
  const StepResult back = read(json::parse(to_json(r).dump()));
  CHECK(back == r);
  CHECK(back.scenario.strategy.name() == "zero3+qgz");
  // The default micro-batch: the whole 8192-token sequences in 2048 tokens, at least one.
  CHECK(r.scenario.tokens_per_gpu == 8192);
  CHECK(r.scenario.micro_batch_sequences == 1);
  CHECK(back.warnings == r.warnings);
  CHECK(back.breakdown.exposed_comm.total_s == r.breakdown.exposed_comm.total_s);
  StepResult other = back;
  other.comm.by_phase.at("gradient_reduction").count += 1;
  CHECK_FALSE(other == r);
  // FSDP2's shard_size is there on a 2-D mesh only, and read back.
  s.strategy = "fsdp2";
  s.hsdp_size = 8;
  const StepResult mesh = simulate(s);
  CHECK(mesh.scenario.strategy.shard_size == 8);
  CHECK(read(json::parse(to_json(mesh).dump())) == mesh);
  s.hsdp_size = 0;
  const json flat = to_json(simulate(s));
  CHECK_FALSE(flat.at("scenario").at("strategy").contains("shard_size"));
}

TEST_CASE("the reader refuses unknown keys, missing keys, other versions and inconsistent names") {
  const json good = golden("simulate-dgx2-1nic-gpt18b-zeropp.json");
  json j = good;
  j["breakdown"]["gpu_s"] = 1.0;
  expect_input_error([&] { read(j); }, "r.json", "/breakdown/gpu_s", "unknown key 'gpu_s'");
  j = good;
  j["comm"].erase("flows");
  expect_input_error([&] { read(j); }, "r.json", "/comm", "missing required key 'flows'");
  j = good;
  j["breakdown"]["compute_kernels_s"].erase("loss");
  expect_input_error([&] { read(j); }, "r.json", "/breakdown/compute_kernels_s",
                     "missing required key 'loss'");
  j = good;
  j["schema_version"] = 1;
  expect_input_error([&] { read(j); }, "r.json", "/schema_version", "schema version 7");
  j = good;
  j["scenario"]["strategy"]["name"] = "zero3";
  expect_input_error([&] { read(j); }, "r.json", "/scenario/strategy/name", "zeropp");
  j = good;
  j["memory"]["fits"] = "yes";
  expect_input_error([&] { read(j); }, "r.json", "/memory/fits", "true or false");
  j = good;
  j["step_time_s"] = 0;
  CHECK_THROWS_AS(read(j), InputError);
}

TEST_CASE("an offloading result round-trips, its offload object read strictly") {
  Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = "llama-3-8b";
  s.deepspeed = std::string(ZEROSIM_SOURCE_DIR) +
                "/workloads/deepspeed/published/axolotl-zero3_bf16_cpuoffload_all.json";
  s.tier = NetworkTier::Analytic;
  const StepResult r = simulate(s);
  REQUIRE(r.has_offload);
  const json j = to_json(r);
  CHECK(j.at("scenario").at("strategy").at("offload_param") == "cpu");
  CHECK(j.at("breakdown").contains("host_optimizer_s"));
  const StepResult back = read(json::parse(j.dump()));
  CHECK(back == r);
  CHECK(to_json(back) == j);
  json bad = j;
  bad["offload"]["pcie_GBps"] = 1.0;
  expect_input_error([&] { read(bad); }, "r.json", "/offload/pcie_GBps", "unknown key");
  bad = j;
  bad["offload"].erase("h2d_bytes_per_gpu");
  expect_input_error([&] { read(bad); }, "r.json", "/offload", "missing required key");
  bad = j;
  bad["scenario"]["strategy"]["offload_param"] = "disk";
  expect_input_error([&] { read(bad); }, "r.json", "/scenario/strategy/offload_param",
                     "cpu or nvme");
  // Without offload, none of its keys is written.
  s.deepspeed.clear();
  const json plain = to_json(simulate(s));
  CHECK_FALSE(plain.contains("offload"));
  CHECK_FALSE(plain.at("breakdown").contains("exposed_offload_s"));
  CHECK_FALSE(plain.at("scenario").at("strategy").contains("offload_optimizer"));
}
