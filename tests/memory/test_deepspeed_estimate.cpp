// DeepSpeed's ZeRO-3 estimator (sim/memory/deepspeed_estimate.hpp) against its closed forms
// (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs) and against the text
// its _all_cold prints, which the expected lines below are: DeepSpeed 0.19.5's function run on
// the same counts (tests/memory/deepspeed_estimator.py runs it against `simulate --memory`).
#include <doctest/doctest.h>

#include "sim/memory/deepspeed_estimate.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {
constexpr double kGiB = 1024.0 * 1024 * 1024;
}  // namespace

TEST_CASE("llama-2-70b on 8 GPUs: 18 bytes per parameter + 4 x the largest layer = 145.5 GiB") {
  const ModelShape m = load_model("llama-2-70b");
  const std::int64_t P = total_param_count(m);
  const LargestLayer big = largest_layer(m);
  CHECK(big.name == "word_embeddings");
  CHECK(big.params == 32000LL * 8192);  // vocab x hidden, above the MLP's 8192 x 28672
  const Zero3EstimateInputs in{P, big.params, 8, 1, 1.5};
  const Zero3EstimateRow none = zero3_estimate(in, false, false, true);
  CHECK(none.gpu_bytes == 4 * big.params + 18 * P / 8);
  CHECK(none.cpu_bytes == static_cast<std::int64_t>(4.0 * big.params * 8 * 1.5));
  // The 145.5 GiB (the table prints 145.52).
  CHECK(static_cast<double>(none.gpu_bytes) / kGiB ==
        zerosim::testing::Approx(145.5154).epsilon(1e-6));
  CHECK(zero3_estimate(in, false, false, false).cpu_bytes ==
        static_cast<std::int64_t>(4.0 * static_cast<double>(P) * 8 * 1.5));
  // Optimizer on the CPU: 2 bytes per parameter on the GPU, 16 on the host.
  const Zero3EstimateRow opt = zero3_estimate(in, true, false, true);
  CHECK(opt.gpu_bytes == 4 * big.params + 2 * P / 8);
  CHECK(opt.cpu_bytes == static_cast<std::int64_t>(static_cast<double>(P) * 16 * 1.5));
  // Both: the largest layer only on the GPU, 18 bytes per parameter on the host.
  const Zero3EstimateRow both = zero3_estimate(in, true, true, true);
  CHECK(both.gpu_bytes == 4 * big.params);
  CHECK(both.cpu_bytes == static_cast<std::int64_t>(static_cast<double>(P) * 18 * 1.5));
  // Without zero_init every rank materialises the model: max(4 x GPUs per node, 18 / nodes).
  CHECK(zero3_estimate(in, true, true, false).cpu_bytes ==
        static_cast<std::int64_t>(static_cast<double>(P) * 32 * 1.5));
  CHECK(format_zero3_estimate(in) ==
        "Estimated memory needed for params, optim states and gradients for a:\n"
        "HW: Setup with 1 node, 8 GPUs per node.\n"
        "SW: Model with 68976M total params, 262M largest layer params.\n"
        "  per CPU  |  per GPU |   Options\n"
        " 1734.47GB |   0.98GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
        " 3083.50GB |   0.98GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
        " 1541.75GB |  17.04GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
        " 3083.50GB |  17.04GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
        "   11.72GB | 145.52GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
        " 3083.50GB | 145.52GB | offload_param=none, offload_optimizer=none, zero_init=0\n");
}

TEST_CASE("several nodes divide the host's share by the nodes; one GPU is singular") {
  const Zero3EstimateInputs in{18'000'000'000, 300'000'000, 16, 24, 1.5};
  CHECK(zero3_estimate(in, true, true, true).cpu_bytes ==
        static_cast<std::int64_t>(18e9 * 18 / 24 * 1.5));
  // max(4 x 16, 18 / 24) = 64 bytes per parameter without zero_init.
  CHECK(zero3_estimate(in, true, false, false).cpu_bytes ==
        static_cast<std::int64_t>(18e9 * 64 * 1.5));
  CHECK(zero3_estimate(in, false, false, true).gpu_bytes ==
        4 * 300'000'000LL + static_cast<std::int64_t>(18 * 18e9 / 384));
  const std::string text = format_zero3_estimate({1'500'000'000, 50'000'000, 1, 1, 1.5});
  CHECK(text.find("HW: Setup with 1 node, 1 GPU per node.\n") != std::string::npos);
  CHECK(text.find("SW: Model with 1500M total params, 50M largest layer params.\n") !=
        std::string::npos);
}

TEST_CASE("the largest layer is one module's own parameters") {
  // gpt-18b: the word embedding (50257 x 6144) over the fused qkv (6144 x 18432 + bias).
  const LargestLayer gpt = largest_layer(load_model("gpt-18b"));
  CHECK(gpt.name == "word_embeddings");
  CHECK(gpt.params == 50257LL * 6144);
  // A model whose MLP is wider than its vocabulary matrix: the MLP's first linear, weight + bias.
  ModelShape wide = load_model("gpt-18b");
  wide.vocab = 1000;
  const LargestLayer fc = largest_layer(wide);
  CHECK(fc.name == "layer0.fc1");
  CHECK(fc.params == 6144LL * 24576 + 24576);
}
