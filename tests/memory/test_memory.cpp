// Memory model: DeepSpeed's 16 bytes/param of model states over W ranks, hpZ's 2Ψ/k, and the
// overflow warning.
#include <doctest/doctest.h>

#include "sim/memory/memory.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {
// gpt-18b on 384 GPUs, 16 per node, sequences of 512.
MemoryInputs inputs(const Strategy& s, std::int64_t tokens, double capacity = 32e9) {
  static auto m = load_model("gpt-18b");
  MemoryInputs in;
  in.model = &m;
  in.strategy = &s;
  in.world = 384;
  in.gpus_per_node = 16;
  in.tokens = tokens;
  in.seq = 512;
  in.capacity_bytes = capacity;
  in.reserved_bytes = 1e9;
  return in;
}
MemoryEstimate run(const Strategy& s, std::int64_t tokens, double capacity = 32e9) {
  return estimate_memory(inputs(s, tokens, capacity));
}
}  // namespace

TEST_CASE("model states are 16 bytes per parameter over the world") {
  auto e = run(parse_strategy("zero3"), 1024);
  const double psi = static_cast<double>(total_param_count(load_model("gpt-18b")));
  CHECK(e.component("params_fp16") + e.component("grads_fp16") + e.component("optimizer_fp32") ==
        zerosim::testing::Approx(16 * psi / 384));
  CHECK(e.component("hpz_secondary") == 0);
  double sum = 0;
  for (auto& [_, b] : e.components) sum += b;
  CHECK(e.peak_bytes == zerosim::testing::Approx(sum));
}

TEST_CASE("hpZ memory overhead is exactly 2Ψ/k") {
  const double psi = static_cast<double>(total_param_count(load_model("gpt-18b")));
  auto s = parse_strategy("zero3+hpz");
  s.hpz_size = 16;
  auto with = run(s, 1024), without = run(parse_strategy("zero3"), 1024);
  CHECK(with.peak_bytes - without.peak_bytes ==
        zerosim::testing::Approx(2 * psi / 16).epsilon(1e-12));
  // The paper: 18B with k = 16 costs about 2.25 GB (gpt-18b has 18.4B parameters).
  CHECK(with.component("hpz_secondary") == zerosim::testing::Approx(2.3e9).epsilon(0.01));
  s.hpz_size = 8;
  CHECK(run(s, 1024).component("hpz_secondary") == zerosim::testing::Approx(2 * psi / 8));
}

TEST_CASE("an overflow still gives an estimate and a warning naming the overflow") {
  auto e = run(parse_strategy("zero3"), 65536);
  CHECK(!e.fits);
  CHECK(e.warning.find("over by") != std::string::npos);
  CHECK(e.warning.find("activations") != std::string::npos);
  auto ok = run(parse_strategy("zero3"), 1024);
  CHECK(ok.fits);
  CHECK(ok.warning.empty());
}

TEST_CASE("qwZ's receive buffers: the weights in flight and the largest call's, with its scales") {
  // The lowering's prefetched elements and largest all_gather_coalesced call (elements, FP32
  // scales over the shard group): INT8 buffers of one byte per element, plus the scales at the
  // call's share, for both.
  const Strategy s = parse_strategy("zero3+qwz");
  MemoryInputs in = inputs(s, 1024);
  in.prefetched_elems = 2e8;
  in.live_elems = 5e8;
  in.largest_call_elems = 4e8;
  in.largest_call_scale_bytes = 1e6;
  const double share = 1e6 / 4e8;
  CHECK(estimate_memory(in).component("quant_buffers") ==
        zerosim::testing::Approx((2e8 + 4e8) * (1 + share)).epsilon(1e-12));
}
