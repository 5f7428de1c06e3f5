// ZeRO++'s quantization groups against DeepSpeed's own loops: CUDAQuantizer.quantize's adaptive
// group count (partition_parameters.py) run literally, and all_to_all_quant_reduce's groups
// (coalesced_collectives.py) in closed form.
#include <doctest/doctest.h>

#include <cstdint>

#include "sim/strategy/quant_groups.hpp"

using namespace zerosim;

namespace {
// CUDAQuantizer.quantize(param, groups=None) as DeepSpeed writes it (0.10.0, 0.13.2, 0.19.5),
// step by step: 0 where its asserts fail.
std::int64_t deepspeed_groups(std::int64_t numel) {
  const std::int64_t target = 8000;
  std::int64_t groups = (numel + target - 1) / target;
  while (groups < numel) {
    if (numel % (8 * groups) == 0) break;
    groups += 1;
  }
  while (numel % (8 * groups * 2) == 0 && static_cast<double>(numel) / groups > target) groups *= 2;
  if (numel % (8 * groups) != 0) return 0;
  return groups;
}
}  // namespace

TEST_CASE("qwZ's group count is CUDAQuantizer.quantize's") {
  // gpt-18b's QKV shard on 384 ranks: 3 x 6144^2 / 384 = 294,912 elements. The search starts at
  // ceil(294912 / 8000) = 37; 36,864 = 2^12 x 9 has no divisor in 37..47, so 48 groups of 6,144.
  CHECK(qwz_quant_groups(294912) == 48);
  // A prime cofactor: 8 x 7919 elements start at 8 and end at 7,919 groups of 8.
  CHECK(qwz_quant_groups(8 * 7919) == 7919);
  // Under one group's target: one group.
  CHECK(qwz_quant_groups(4096) == 1);
  // Not a multiple of 8: DeepSpeed asserts; the model prices the start.
  CHECK(deepspeed_groups(8001) == 0);
  CHECK(qwz_quant_groups(8001) == 2);
  // Every size up to 200,000 (and a stride beyond) against the literal loop.
  for (std::int64_t n = 8; n <= 200000; n += 8) {
    CAPTURE(n);
    REQUIRE(qwz_quant_groups(n) == deepspeed_groups(n));
  }
  for (std::int64_t n = 200000; n <= 40000000; n += 8 * 9973) {
    CAPTURE(n);
    REQUIRE(qwz_quant_groups(n) == deepspeed_groups(n));
  }
}

TEST_CASE("QwzGroupCounter answers as qwz_quant_groups, first time and again") {
  QwzGroupCounter counter;
  for (int pass = 0; pass < 2; ++pass)
    for (std::int64_t n : {294912, 8 * 7919, 4096, 8001, 98320, 8008}) {
      CAPTURE(pass);
      CAPTURE(n);
      CHECK(counter(n) == qwz_quant_groups(n));
    }
  Module m;
  m.params = {ParamTensor{"w", 6144 * 6144, false, 6144}, ParamTensor{"b", 6144, true, 0}};
  m.gather_elems = 6144 * 6144 + 6144;
  CHECK(qwz_scale_bytes(m, 16, 384, &counter) == qwz_scale_bytes(m, 16, 384));
}

TEST_CASE("qwZ's scales for a module's gather: groups of the rank's flat shard, from every rank") {
  // Two tensors of 6144 x 6144 and 6144 over 384 ranks: the shard is 98,304 + 16 = 98,320
  // elements; from ceil(98320 / 8000) = 13 the first divisor of 12,290 = 2 x 5 x 1229 is 1,229
  // (groups of 80).
  Module m;
  m.params = {ParamTensor{"w", 6144 * 6144, false, 6144}, ParamTensor{"b", 6144, true, 0}};
  m.gather_elems = 6144 * 6144 + 6144;
  CHECK(qwz_quant_groups(98320) == 1229);
  CHECK(qwz_scale_bytes(m, 384, 384) == 4.0 * 384 * deepspeed_groups(98320));
  // hpZ's secondary partition over 16 ranks: 24 x the primary shard.
  CHECK(qwz_scale_bytes(m, 16, 384) == 4.0 * 16 * deepspeed_groups(24 * 98320));
  // A partition pads to ceil(numel / ranks): 24,023 elements over 3 ranks are 8,008 each,
  // quantized in 7 groups (1001 = 7 x 11 x 13).
  Module odd;
  odd.params = {ParamTensor{"x", 24023, false, 24023}};
  odd.gather_elems = 24023;
  CHECK(qwz_quant_groups(8008) == 7);
  CHECK(qwz_scale_bytes(odd, 3, 3) == 4.0 * 3 * 7);
}

TEST_CASE("qgZ's groups: max(rows, cols, world), then that // GPUs per node") {
  // coalesced_collectives.py all_to_all_quant_reduce: intra_quant_group = max(shape[0],
  // shape[1], world), inter_quant_group = intra_quant_group // local_world_size.
  CHECK(qgz_intra_groups(4 * 6144, 384) == 24576);
  CHECK(qgz_inter_groups(4 * 6144, 384, 16) == 1536);
  CHECK(qgz_intra_groups(100, 384) == 384);
  CHECK(qgz_inter_groups(100, 384, 16) == 24);
  CHECK(qgz_inter_groups(100, 100, 8) == 12);  // floor division
}
