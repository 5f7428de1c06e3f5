// MFU and HFU next to Megatron's TFLOPs/GPU: MFU counts the architecture's model FLOPs without
// recompute (MoE: top-k experts), HFU the FLOPs executed, both over the profile's peak.
#include <doctest/doctest.h>

#include "sim/core/data_dir.hpp"
#include "sim/step/simulate.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {
Scenario scenario(const std::string& model, bool checkpointing) {
  Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = model;
  s.strategy = "zeropp";
  s.tokens_per_gpu = 4096;
  s.seq_len = 4096;
  s.tier = NetworkTier::Analytic;
  s.activation_checkpointing = checkpointing;
  return s;
}
}  // namespace

TEST_CASE("MFU is model FLOPs (no recompute) over the peak; HFU adds the recompute") {
  for (bool ckpt : {true, false}) {
    CAPTURE(ckpt);
    const auto r = simulate(scenario("llama-3-8b", ckpt));
    const double W = r.scenario.world_size, step = r.step_time_s;
    const double model = 3 * model_forward_flops(load_model("llama-3-8b"), 4096, 4096) * W;
    CHECK(r.mfu_flops_per_step == zerosim::testing::Approx(model).epsilon(1e-12));
    CHECK(r.peak_tflops_per_gpu == zerosim::testing::Approx(989).epsilon(0.01));  // H100 SXM BF16
    CHECK(r.mfu == zerosim::testing::Approx(model / (W * step * r.peak_tflops_per_gpu * 1e12)));
    CHECK(r.hfu == zerosim::testing::Approx(r.counted_flops_per_step /
                                            (W * step * r.peak_tflops_per_gpu * 1e12)));
    CHECK(r.mfu > 0);
    CHECK(r.mfu < 1);
    // llama-3-8b on H100s runs FlashAttention (auto), whose backward recomputes the scores: HFU
    // counts half a pass of the attention FLOPs more.
    REQUIRE(r.scenario.attention == "flash");
    double attention = 0;
    for (const auto& m : build_modules(load_model("llama-3-8b"), 4096, 4096))
      attention += m.attention_flops;
    if (ckpt)
      CHECK(r.hfu > r.mfu * 1.2);  // the layers' forward runs twice
    else
      CHECK(r.counted_flops_per_step - r.mfu_flops_per_step ==
            zerosim::testing::Approx(0.5 * attention * W).epsilon(1e-9));
    auto eager = scenario("llama-3-8b", ckpt);
    eager.attention = AttentionChoice::Eager;
    const auto e = simulate(eager);
    CHECK(e.mfu_flops_per_step == r.mfu_flops_per_step);
    if (!ckpt) CHECK(e.hfu == zerosim::testing::Approx(e.mfu).epsilon(1e-12));
  }
}

TEST_CASE("an MoE's MFU counts its top-k experts, not all of them") {
  const std::string file = data_dir() + "/workloads/hf/mixtral-8x7b-v0.1.json";
  const auto r = simulate(scenario(file, false));
  const auto m = load_model(file);
  const double W = r.scenario.world_size;
  CHECK(r.mfu_flops_per_step ==
        zerosim::testing::Approx(3 * model_forward_flops(m, 4096, 4096) * W).epsilon(1e-12));
  // Per token: 6 x the active GEMM parameters (not the embedding lookup, not the norms) plus
  // attention; far below 6 x all parameters.
  const double per_token = r.mfu_flops_per_step / (W * 4096);
  const double active_gemm =
      static_cast<double>(active_param_count(m)) - 32000.0 * 4096 - (2 * 32 + 1) * 4096.0;
  CHECK(per_token ==
        zerosim::testing::Approx(6 * active_gemm + 32 * 12.0 * 4096 * 4096).epsilon(1e-9));
  CHECK(per_token < 0.3 * 6 * static_cast<double>(total_param_count(m)));
  // The Megatron figure is said not to fit; a dense model has no such warning.
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("Megatron-LM's formula") != std::string::npos;
  CHECK(warned);
  for (const auto& w : simulate(scenario("llama-3-8b", true)).warnings)
    CHECK(w.find("Megatron-LM's formula") == std::string::npos);
}
