// `simulate --memory` (sim/cli/memory_view.hpp): zerosim's components as the result JSON has them,
// DeepSpeed's table, and the term-by-term rows whose zerosim column adds up to the peak.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "sim/core/json_io.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/run_cli.hpp"

using zerosim::json;

namespace {
std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }
}  // namespace

TEST_CASE("simulate --memory shows the result's components beside DeepSpeed's estimator") {
  const std::string scenario =
      "simulate --cluster dgx-h100 --nodes 2 --model llama-2-70b --strategy zero3 --tier analytic";
  const CliRun view = run(scenario + " --memory");
  REQUIRE(view.rc == 0);
  const CliRun js = run(scenario + " --json");
  REQUIRE(js.rc == 0);
  const json r = json::parse(js.out);
  const json& c = r.at("memory").at("components");
  for (const auto& [name, bytes] : c.items())
    CHECK(view.out.find(fmt::format("  {:<26} {:>11}", name, gib(bytes.get<double>()))) !=
          std::string::npos);
  const double P = r.at("scenario").at("params").get<double>();
  const double states = c.at("params_fp16").get<double>() + c.at("grads_fp16").get<double>() +
                        c.at("optimizer_fp32").get<double>();
  CHECK(states == zerosim::testing::Approx(16 * P / 16).epsilon(1e-12));
  // The model-states row: DeepSpeed's int(18 P / 16) against zerosim's 16 P / 16.
  const std::string ds_states = gib(static_cast<double>(static_cast<std::int64_t>(18 * P / 16)));
  CHECK(view.out.find(fmt::format("  {:<15} {:<28} {:>11}   {:<36} {:>11}   -{}", "model states",
                                  "18 B/param / 16 GPUs", ds_states,
                                  "params + grads + optimizer_fp32", gib(states),
                                  gib(18 * P / 16 - states))) != std::string::npos);
  CHECK(view.out.find("largest_layer_params 262144000 (word_embeddings)") != std::string::npos);
  CHECK(view.out.find("HW: Setup with 2 nodes, 8 GPUs per node.") != std::string::npos);
  CHECK(view.out.find(fmt::format("{:>11}", gib(r.at("memory").at("peak_bytes_per_gpu")))) !=
        std::string::npos);
  // --memory is text: with --json it is refused.
  const CliRun both = run(scenario + " --memory --json");
  CHECK(both.rc != 0);
  CHECK(both.out.find("--json excludes --memory") != std::string::npos);
}

TEST_CASE("simulate --memory of a strategy the ZeRO-3 estimator does not model says so") {
  const CliRun view = run(
      "simulate --cluster dgx-h100 --nodes 2 --model llama-3-8b --strategy fsdp --tier analytic "
      "--memory");
  REQUIRE(view.rc == 0);
  CHECK(view.out.find("no row to compare term by term") != std::string::npos);
  CHECK(view.out.find("  per CPU  |  per GPU |   Options") != std::string::npos);
}
