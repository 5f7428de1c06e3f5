// Memory model: DeepSpeed's 16 bytes/param of model states over W ranks, hpZ's 2Ψ/k, and the
// overflow warning.
#include <doctest/doctest.h>

#include "sim/memory/memory.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {
MemoryEstimate run(const Strategy& s, std::int64_t tokens, double capacity = 32e9) {
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
  return estimate_memory(in);
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
