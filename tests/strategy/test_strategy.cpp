// Strategy strings and DeepSpeed configs: every component switchable, strict parsing, stage-3
// rules; DeepSpeed's gradient bucketing.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "sim/strategy/buckets.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/model.hpp"

using namespace zerosim;

TEST_CASE("strategy strings") {
  auto z = parse_strategy("zero3");
  CHECK((!z.qwz && !z.hpz && !z.qgz));
  auto pp = parse_strategy("zeropp");
  CHECK((pp.qwz && pp.hpz && pp.qgz));
  CHECK(pp.name() == "zeropp");
  auto two = parse_strategy("zero3+qgz+qwz");
  CHECK((two.qwz && !two.hpz && two.qgz));
  CHECK(two.name() == "zero3+qwz+qgz");
  CHECK(parse_strategy("zero3+qwz+hpz+qgz").name() == "zeropp");
}

TEST_CASE("bad strategy strings name the component") {
  try {
    parse_strategy("zero3+qwz+fast");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.path() == "--strategy");
    CHECK(std::string(e.what()).find("unknown strategy component 'fast'") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_strategy("zero2"), InputError);
  CHECK_THROWS_AS(parse_strategy("zero3+qwz+qwz"), InputError);
  CHECK_THROWS_AS(parse_strategy("zero3+"), InputError);
}

TEST_CASE("DeepSpeed config with the ZeRO++ keys") {
  auto j = parse_json_text(R"({
    "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
    "fp16": {"enabled": true, "loss_scale": 0},
    "zero_optimization": {"stage": 3, "reduce_bucket_size": 10000000, "reduce_scatter": true,
      "zero_quantized_weights": true, "zero_hpz_partition_size": 16,
      "zero_quantized_gradients": true, "contiguous_gradients": true, "overlap_comm": true,
      "stage3_prefetch_bucket_size": 5e7, "stage3_max_live_parameters": 3e9}})",
                           "ds.json");
  auto s = parse_deepspeed(j, "ds.json");
  CHECK((s.qwz && s.hpz && s.qgz));
  CHECK(s.hpz_size == 16);
  CHECK(s.reduce_bucket_elems == 10000000);
  CHECK(s.prefetch_bucket_elems == 50000000);
  CHECK(s.max_live_params == 3000000000);
  CHECK(s.micro_batch_sequences == 2);
  CHECK(s.grad_accum == 4);
  CHECK(s.dtype == "fp16");
  auto plain = parse_deepspeed(parse_json_text(R"({"bf16": {"enabled": true},
    "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 1}})",
                                               "d.json"),
                               "d.json");
  CHECK(plain.name() == "zero3");
  CHECK(plain.dtype == "bf16");
}

TEST_CASE("DeepSpeed config errors") {
  auto err = [](const char* text) -> std::string {
    try {
      parse_deepspeed(parse_json_text(text, "ds.json"), "ds.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  auto stage2 = err(
      R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 2, "zero_quantized_gradients": true}})");
  CHECK(stage2.find("ds.json: /zero_optimization/stage") != std::string::npos);
  CHECK(stage2.find("needs stage 3") != std::string::npos);
  auto unknown = err(
      R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_quantised_weights": true}})");
  CHECK(unknown.find("/zero_optimization/zero_quantised_weights") != std::string::npos);
  CHECK(
      !err(R"({"fp16": {"enabled": true}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}})")
           .empty());
  CHECK(!err(R"({"zero_optimization": {"stage": 3}})").empty());
  CHECK(
      !err(R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto"}})")
           .empty());
}

TEST_CASE("gradient buckets follow DeepSpeed's flush rule") {
  auto m = load_model("gpt-18b");
  auto mods = build_modules(m, 512, 512);
  const std::int64_t h = 6144;
  // A bucket larger than the model: one bucket, ready when the embedding (module 0) finishes.
  auto one = make_grad_buckets(mods, std::int64_t{1} << 40, false, 384);
  REQUIRE(one.size() == 1);
  CHECK(one[0].ready_module == 0);
  CHECK(one[0].elems() == total_param_count(m));
  // 1e7-element buckets: every 2-D weight is larger, so each is reduced alone, and the 1-D tensors
  // between them form small buckets. Total is conserved.
  auto small = make_grad_buckets(mods, 10'000'000, true, 384);
  std::int64_t total = 0, quantized = 0;
  for (auto& b : small) total += b.elems(), quantized += b.quantized;
  CHECK(total == total_param_count(m));
  // Every 2-D tensor of gpt-18b divides by 2 x 384 (h = 8 x 768), so only 1-D tensors fall back:
  // per layer 13h (biases and LayerNorms) minus nothing, plus the final LayerNorm's 2h.
  CHECK(total - quantized == 40 * 13 * h + 2 * h);
  // Without qgZ nothing is quantized.
  for (auto& b : make_grad_buckets(mods, 10'000'000, false, 384)) CHECK(b.quantized == 0);
}
