// The batch flags end to end: --micro-batch in sequences on simulate, sweep and plan; an explicit
// --tokens-per-gpu runs as given or is refused (exit 2) with its neighbours, in a sweep each value
// on its own (never merged into one axis value); sweep requires --cluster and --model as simulate.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/core/json_io.hpp"
#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"

namespace {

const std::string kLlama8b =  // llama-3-8b trains at 8192-token sequences
    "--cluster dgx-h100 --nodes 1 --model llama-3-8b --tier analytic ";

}  // namespace

TEST_CASE("simulate: --micro-batch N runs N x seq tokens; the same as --tokens-per-gpu") {
  CliRun a = run("simulate " + kLlama8b + "--micro-batch 2 --json");
  CliRun b = run("simulate " + kLlama8b + "--tokens-per-gpu 16384 --json");
  REQUIRE_MESSAGE(a.rc == 0, a.out);
  REQUIRE_MESSAGE(b.rc == 0, b.out);
  const auto ja = zerosim::json::parse(a.out), jb = zerosim::json::parse(b.out);
  CHECK(ja["scenario"]["tokens_per_gpu"] == 16384);
  CHECK(ja["scenario"]["micro_batch_sequences"] == 2);
  CHECK(ja["step_time_s"] == jb["step_time_s"]);
  CliRun text = run("simulate " + kLlama8b + "--micro-batch 2");
  CHECK_MESSAGE(text.out.find("micro-batch 2 x seq 8192 = 16384 tokens/GPU") != std::string::npos,
                text.out);
}

TEST_CASE("simulate: an explicit --tokens-per-gpu below one sequence is refused, not raised") {
  CliRun r = run("simulate " + kLlama8b + "--tokens-per-gpu 2048");
  CHECK(r.rc == 2);
  CHECK_MESSAGE(r.out.find("--tokens-per-gpu: 2048 is not a whole number of 8192-token "
                           "sequences") != std::string::npos,
                r.out);
  CHECK(r.out.find("8192 (--micro-batch 1)") != std::string::npos);
  CliRun both = run("simulate " + kLlama8b + "--tokens-per-gpu 8192 --micro-batch 1");
  CHECK(both.rc == 2);
  CHECK_MESSAGE(both.out.find("--micro-batch") != std::string::npos, both.out);
}

TEST_CASE("sweep: --tokens-per-gpu 1024,2048 on 8192-token sequences is two refusals") {
  CliRun r = run("sweep " + kLlama8b + "--tokens-per-gpu 1024,2048,8192 --threads 1");
  CHECK(r.rc == 2);  // bad combinations listed, the valid one written
  CHECK_MESSAGE(r.out.find("scenario #0") != std::string::npos, r.out);
  CHECK(r.out.find("scenario #1") != std::string::npos);
  CHECK(r.out.find("2 of 3 scenarios are bad input") != std::string::npos);
  const std::filesystem::path d = temp_dir("batchflags");
  const std::string out = (d / "s.json").string();
  CliRun ok = run("sweep " + kLlama8b + "--micro-batch 1,2 --threads 1 --out " + out);
  REQUIRE_MESSAGE(ok.rc == 0, ok.out);
  const auto doc = zerosim::load_json_file(out);
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][0]["scenario"]["tokens_per_gpu"] == 8192);
  CHECK(doc["results"][1]["scenario"]["tokens_per_gpu"] == 16384);
  std::filesystem::remove_all(d);
}

TEST_CASE("sweep requires --cluster and --model, as simulate does") {
  for (const std::string missing : {"--cluster", "--model"}) {
    CAPTURE(missing);
    const std::string args = missing == "--cluster" ? "--model gpt-18b" : "--cluster dgx-h100";
    CliRun r = run("sweep " + args + " --nodes 1 --tier analytic");
    CHECK(r.rc == 2);
    CHECK_MESSAGE(r.out.find(missing) != std::string::npos, r.out);
  }
}
