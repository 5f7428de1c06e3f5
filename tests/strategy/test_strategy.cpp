// Strategy strings and DeepSpeed configs: every component switchable, strict parsing, stage-3
// rules; DeepSpeed's gradient bucketing.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "sim/strategy/buckets.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/model.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

// A BF16 DeepSpeed config "ds.json" whose zero_optimization is `zero`.
Strategy ds(const char* zero) {
  return parse_deepspeed(
      parse_json_text(
          std::string(R"({"bf16": {"enabled": true}, "zero_optimization": )") + zero + "}",
          "ds.json"),
      "ds.json");
}

}  // namespace

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
  const auto e = caught_input_error([] { parse_strategy("zero3+qwz+fast"); });
  CHECK(e.path() == "--strategy");
  CHECK(std::string(e.what()).find("unknown strategy component 'fast'") != std::string::npos);
  CHECK_THROWS_AS(parse_strategy("zero4"), InputError);
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
      err(R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3, "reduce_bucket_size": "car"}})")
          .find("/zero_optimization/reduce_bucket_size") != std::string::npos);
  // The same setting under both of DeepSpeed's names.
  CHECK(
      err(R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3, "max_live_parameters": 0,
                "stage3_max_live_parameters": 1}})")
          .find("given twice") != std::string::npos);
  CHECK(err(R"({"fp16": {"enabled": "maybe"}, "zero_optimization": {"stage": 3}})")
            .find("/fp16/enabled") != std::string::npos);
  CHECK(err(R"({"fp16": {"enabled": true}, "communication_data_type": "int8",
               "zero_optimization": {"stage": 3}})")
            .find("/communication_data_type") != std::string::npos);
}

TEST_CASE(
    "published DeepSpeed configs: stages 1, 2 and 3 load with \"auto\" filled, offloading "
    "included") {
  const std::string dir = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/published/";
  // Axolotl's and Accelerate's stage-3 configs: "auto" batch, buckets and dtype, max_live 0.
  for (const char* f :
       {"axolotl-zero3.json", "axolotl-zero3_bf16.json", "accelerate-zero_stage3_config.json"}) {
    CAPTURE(f);
    Strategy s = load_deepspeed(dir + f);
    CHECK(s.reduce_bucket_elems == Strategy::kAuto);
    CHECK(s.prefetch_bucket_elems == Strategy::kAuto);
    CHECK(s.micro_batch_sequences == 0);  // "auto": the command line's value stands
    CHECK(s.train_batch_size == 0);
  }
  CHECK(load_deepspeed(dir + "axolotl-zero3.json").max_live_params == 0);
  CHECK(load_deepspeed(dir + "axolotl-zero3.json").dtype == "auto");
  CHECK(load_deepspeed(dir + "axolotl-zero3_bf16.json").dtype == "bf16");
  CHECK(load_deepspeed(dir + "accelerate-zero_stage3_config.json").dtype == "fp16");
  CHECK(load_deepspeed(dir + "accelerate-zero_stage3_config.json").grad_accum == 1);
  // Offloading to the CPU (ZeRO-Offload): the devices of each block.
  struct Offload {
    const char* file;
    OffloadDevice opt, param;
    bool pageable;
  };
  constexpr auto cpu = OffloadDevice::Cpu, none = OffloadDevice::None;
  for (const Offload& o :
       {Offload{"transformers-tests-ds_config_zero3.json", cpu, cpu, false},
        Offload{"axolotl-zero3_bf16_cpuoffload_all.json", cpu, cpu, false},
        Offload{"axolotl-zero3_bf16_cpuoffload_params.json", none, cpu, false},
        Offload{"accelerate-zero_stage3_offload_config.json", cpu, cpu, false},
        Offload{"axolotl-zero2.json", cpu, none, true},
        Offload{"transformers-tests-ds_config_zero2.json", cpu, none, false},
        Offload{"accelerate-zero_stage2_offload_config.json", cpu, none, false}}) {
    CAPTURE(o.file);
    const Strategy s = load_deepspeed(dir + o.file);
    CHECK(s.offload_optimizer == o.opt);
    CHECK(s.offload_param == o.param);
    CHECK(s.offload_pageable == o.pageable);
    CHECK(s.offloads());
    CHECK(to_json(s).contains("offload_optimizer") == (o.opt != none));
    CHECK(to_json(s).value("offload_param", "none") == to_string(o.param));
  }
  CHECK_FALSE(load_deepspeed(dir + "axolotl-zero3.json").offloads());
  CHECK_FALSE(to_json(load_deepspeed(dir + "axolotl-zero3.json")).contains("offload_optimizer"));
  // Stages 1 and 2 load.
  CHECK(load_deepspeed(dir + "axolotl-zero1.json").stage == 1);
  CHECK(load_deepspeed(dir + "axolotl-zero1.json").name() == "zero1");
  const Strategy a1 = load_deepspeed(dir + "accelerate-zero_stage1_config.json");
  CHECK(a1.stage == 1);
  CHECK(a1.allgather_bucket_elems == 200'000'000);
  CHECK(a1.reduce_bucket_elems == Strategy::kAuto);
  const Strategy a2 = load_deepspeed(dir + "accelerate-zero_stage2_config.json");
  CHECK(a2.stage == 2);
  CHECK(a2.name() == "zero2");
  CHECK(a2.dtype == "fp16");
  CHECK(load_deepspeed(dir + "axolotl-zero2.json").stage == 2);
}

TEST_CASE("offload blocks: every documented key read, the rest refused naming the key") {
  const Strategy n = ds(R"({"stage": 3, "offload_optimizer": {"device": "nvme",
      "nvme_path": "/local_nvme", "pin_memory": true, "buffer_count": 4, "fast_init": false,
      "ratio": 1}, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme",
      "buffer_count": 5, "buffer_size": 1e8, "max_in_cpu": 1e9, "pin_memory": true}})");
  CHECK(n.offload_optimizer == OffloadDevice::Nvme);
  CHECK(n.offload_param == OffloadDevice::Nvme);
  CHECK_FALSE(n.offload_pageable);
  CHECK(ds(R"({"stage": 1, "offload_optimizer": {"device": "cpu"}})").offload_optimizer ==
        OffloadDevice::Cpu);
  CHECK(ds(R"({"stage": 1, "offload_optimizer": {"device": "cpu"}})").offload_pageable);
  CHECK_FALSE(ds(R"({"stage": 3, "offload_param": {"device": "none"}})").offloads());
  expect_input_error([] { ds(R"({"stage": 3, "offload_param": {"device": "cpu", "ratio": 1}})"); },
                     "ds.json", "/zero_optimization/offload_param/ratio", "unknown key");
  expect_input_error([] { ds(R"({"stage": 3, "offload_optimizer": {"device": "disk"}})"); },
                     "ds.json", "/zero_optimization/offload_optimizer/device",
                     "not one of none, cpu, nvme");
  expect_input_error([] { ds(R"({"stage": 2, "offload_param": {"device": "cpu"}})"); }, "ds.json",
                     "/zero_optimization/offload_param/device", "needs stage 3");
  expect_input_error([] { ds(R"({"stage": 3, "offload_param": {"device": "nvme"}})"); }, "ds.json",
                     "/zero_optimization/offload_param/device", "nvme_path");
  expect_input_error(
      [] { ds(R"({"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.3}})"); },
      "ds.json", "/zero_optimization/offload_optimizer/ratio", "not modelled");
  expect_input_error(
      [] { ds(R"({"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": 1}})"); },
      "ds.json", "/zero_optimization/offload_optimizer/pin_memory", "");
  expect_input_error(
      [] { ds(R"({"stage": 3, "mics_shard_size": 8, "offload_optimizer": {"device": "cpu"}})"); },
      "ds.json", "/zero_optimization/offload_optimizer/device", "MiCS");
  expect_input_error(
      [] {
        ds(R"({"stage": 3, "zero_hpz_partition_size": 8, "offload_param": {"device": "cpu"}})");
      },
      "ds.json", "/zero_optimization/offload_param/device", "hpZ");
}

TEST_CASE("zero1, zero2 and hsdp by name and from a DeepSpeed config's stage and mics_shard_size") {
  CHECK(parse_strategy("zero1").stage == 1);
  CHECK(parse_strategy("zero2").stage == 2);
  CHECK(parse_strategy("zero2").name() == "zero2");
  CHECK(parse_strategy("hsdp").hsdp);
  CHECK(parse_strategy("hsdp").stage == 3);
  CHECK(parse_strategy("hsdp").name() == "hsdp");
  CHECK(parse_strategy("zero3").name() == "zero3");
  CHECK(parse_strategy("zero3").shard_ranks(64) == 64);
  Strategy h = parse_strategy("hsdp");
  h.shard_size = 8;
  CHECK(h.shard_ranks(64) == 8);
  expect_input_error([] { parse_strategy("zero4"); }, "<command line>", "--strategy",
                     "zero1, zero2, hsdp, fsdp");
  expect_input_error([] { parse_strategy("zero2+qwz"); }, "<command line>", "--strategy",
                     "zero2 takes no components");
  const Strategy m = ds(R"({"stage": 3, "mics_shard_size": 8})");
  CHECK(m.hsdp);
  CHECK(m.shard_size == 8);
  CHECK(m.name() == "hsdp");
  CHECK_FALSE(ds(R"({"stage": 3, "mics_shard_size": -1})").hsdp);  // DeepSpeed's "off"
  CHECK(ds(R"({"stage": 2, "allgather_bucket_size": 2e8})").allgather_bucket_elems == 200'000'000);
  expect_input_error([] { ds(R"({"stage": 2, "mics_shard_size": 8})"); }, "ds.json",
                     "/zero_optimization/stage", "mics_shard_size (MiCS) needs stage 3");
  expect_input_error([] { ds(R"({"stage": 3, "mics_shard_size": 0})"); }, "ds.json",
                     "/zero_optimization/mics_shard_size", "-1 (off) or at least 1");
  expect_input_error([] { ds(R"({"stage": 0})"); }, "ds.json", "/zero_optimization/stage",
                     "ZeRO stages 1, 2 and 3 are modelled");
  expect_input_error(
      [] { ds(R"({"stage": 3, "mics_shard_size": 8, "zero_quantized_weights": true})"); },
      "ds.json", "/zero_optimization/mics_shard_size", "ZeRO++");
}

TEST_CASE("\"auto\" is filled as Hugging Face's Trainer fills it") {
  Strategy s = load_deepspeed(std::string(ZEROSIM_SOURCE_DIR) +
                              "/workloads/deepspeed/published/axolotl-zero3.json");
  const auto filled = resolve_auto(s, 4096, true);
  CHECK(s.reduce_bucket_elems == 4096 * 4096);
  CHECK(s.prefetch_bucket_elems == static_cast<std::int64_t>(0.9 * 4096 * 4096));
  CHECK(s.dtype == "bf16");
  CHECK(filled.size() == 3);
  Strategy v = load_deepspeed(std::string(ZEROSIM_SOURCE_DIR) +
                              "/workloads/deepspeed/published/axolotl-zero3.json");
  resolve_auto(v, 4096, false);
  CHECK(v.dtype == "fp16");
  // Nothing "auto": nothing filled.
  Strategy d = parse_strategy("zeropp");
  CHECK(resolve_auto(d, 4096, true).empty());
  CHECK(d.reduce_bucket_elems == 500'000'000);
}

TEST_CASE("gradient buckets follow DeepSpeed's flush rule") {
  auto m = load_model("gpt-18b");
  auto mods = build_modules(m, 512, 512);
  const std::int64_t h = 6144;
  // A bucket larger than the model: one bucket, ready when the embedding (module 0) finishes.
  auto one = make_grad_buckets(mods, std::int64_t{1} << 40, false, 384, true);
  REQUIRE(one.size() == 1);
  CHECK(one[0].ready_module == 0);
  CHECK(one[0].elems() == total_param_count(m));
  // 1e7-element buckets: every 2-D weight is larger, so each is reduced alone, and the 1-D tensors
  // between them form small buckets. Total is conserved.
  auto small = make_grad_buckets(mods, 10'000'000, true, 384, true);
  std::int64_t total = 0, quantized = 0;
  for (auto& b : small) total += b.elems(), quantized += b.quantized;
  CHECK(total == total_param_count(m));
  // Every 2-D tensor of gpt-18b divides by 2 x 384 (h = 8 x 768), so only 1-D tensors fall back:
  // per layer 13h (biases and LayerNorms) minus nothing, plus the final LayerNorm's 2h.
  CHECK(total - quantized == 40 * 13 * h + 2 * h);
  // Without qgZ nothing is quantized.
  for (auto& b : make_grad_buckets(mods, 10'000'000, false, 384, true)) CHECK(b.quantized == 0);
}

TEST_CASE("qgZ's fallback of tensors not divisible by 2 x world follows the DeepSpeed release") {
  // gpt-18b on 5 x 16 = 80 GPUs: 2 x 80 = 160 = 32 x 5, and h = 6144 = 2^11 x 3 has no factor 5,
  // so no 2-D tensor divides (h x h, 3h x h, 4h x h; the embedding 50257... x h neither).
  auto m = load_model("gpt-18b");
  auto mods = build_modules(m, 512, 512);
  std::int64_t one_d = 0, total = 0;
  for (const auto& mod : mods)
    for (const auto& p : mod.params) {
      total += p.elems;
      if (p.one_d) one_d += p.elems;
      if (!p.one_d) CHECK(p.elems % 160 != 0);
    }
  auto quantized = [&](bool divisibility) {
    std::int64_t q = 0;
    for (auto& b : make_grad_buckets(mods, 10'000'000, true, 80, divisibility)) q += b.quantized;
    return q;
  };
  // 0.13.2 on (PR #5056): every 2-D tensor falls back too; before, only the 1-D ones.
  CHECK(quantized(true) == 0);
  CHECK(quantized(false) == total - one_d);
  CHECK(qgz_divisibility_fallback(parse_deepspeed_version("0.13.2")));
  CHECK(!qgz_divisibility_fallback(parse_deepspeed_version("0.13.1")));
  CHECK(qgz_divisibility_fallback(Strategy{}.deepspeed_version));  // the default: 0.19
}

TEST_CASE("DeepSpeed versions: accepted forms, range and hpZ rule per release") {
  CHECK(deepspeed_version_rule("0.19").empty());
  CHECK(deepspeed_version_rule("0.19.5").empty());
  CHECK(deepspeed_version_rule("0.10.0").empty());
  CHECK(deepspeed_version_rule("0.14").empty());
  CHECK(deepspeed_version_rule("0.9.5").find("before 0.10.0") != std::string::npos);
  CHECK(deepspeed_version_rule("0.20").find("after 0.19") != std::string::npos);
  CHECK(deepspeed_version_rule("1.0").find("after 0.19") != std::string::npos);
  // Components near INT_MAX order as numbers (the fuzzer's "99999191.24" overflowed a packed code).
  CHECK(deepspeed_version_rule("99999191.24").find("after 0.19") != std::string::npos);
  CHECK(deepspeed_version_rule("0.2147483647.2147483647").find("after 0.19") != std::string::npos);
  CHECK(deepspeed_version_rule("0.13").find("needs its patch") != std::string::npos);
  CHECK(deepspeed_version_rule("0.10").find("needs its patch") != std::string::npos);
  for (const char* bad : {"", "0", "v0.19", "0.19.", ".19", "0.19.5.1", "0.-1", "0.19a", "x"})
    CHECK(deepspeed_version_rule(bad).find("is not MAJOR.MINOR") != std::string::npos);
  auto rule = [](const char* v) { return hpz_rule(parse_deepspeed_version(v)); };
  CHECK(rule("0.10.0") == HpzRule::BackwardOnly);
  CHECK(rule("0.10.1") == HpzRule::BackwardOnly);
  CHECK(rule("0.10.2") == HpzRule::GradEnabled);
  CHECK(rule("0.13.1") == HpzRule::GradEnabled);
  CHECK(rule("0.13.2") == HpzRule::WhenPresent);
  CHECK(rule("0.19") == HpzRule::WhenPresent);
  CHECK(to_string(parse_deepspeed_version("0.19")) == "0.19");
  CHECK(to_string(parse_deepspeed_version("0.13.2")) == "0.13.2");
  CHECK(to_string(Strategy{}.deepspeed_version) == "0.19");
}

TEST_CASE("an \"auto\" dtype picks among the sections left \"auto\", BF16 where the GPU has it") {
  auto pick = [](const char* fp16, const char* bf16, bool gpu_bf16) {
    Strategy s = parse_deepspeed(parse_json_text(std::string(R"({"fp16": {"enabled": )") + fp16 +
                                                     R"(}, "bf16": {"enabled": )" + bf16 +
                                                     R"(}, "zero_optimization": {"stage": 3}})",
                                                 "ds.json"),
                                 "ds.json");
    resolve_auto(s, 1024, gpu_bf16);
    return s.dtype;
  };
  CHECK(pick("\"auto\"", "\"auto\"", true) == "bf16");
  CHECK(pick("\"auto\"", "\"auto\"", false) == "fp16");
  CHECK(pick("\"auto\"", "false", true) == "fp16");   // only FP16 may be chosen
  CHECK(pick("false", "\"auto\"", false) == "bf16");  // only BF16 may be chosen
  CHECK(pick("true", "\"auto\"", true) == "fp16");    // explicit wins
}

TEST_CASE("stage-3 keys read but not modelled are marked for the result's warnings") {
  CHECK(ds(R"({"stage": 3})").unmodelled_keys == 0);
  CHECK(ds(R"({"stage": 3, "param_persistence_threshold": "auto"})").unmodelled_keys ==
        Strategy::kUnmodelledPersistence);
  CHECK(ds(R"({"stage": 3, "stage3_gather_16bit_weights_on_model_save": true})").unmodelled_keys ==
        0);  // saving a checkpoint is not part of a step
  const std::string dir = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/published/";
  CHECK(load_deepspeed(dir + "axolotl-zero3.json").unmodelled_keys ==
        Strategy::kUnmodelledPersistence);
}

TEST_CASE("stage3_max_reuse_distance is read (DeepSpeed's default 1e9), under either name") {
  CHECK(ds(R"({"stage": 3})").max_reuse_distance == 1'000'000'000);
  CHECK(ds(R"({"stage": 3, "stage3_max_reuse_distance": 1e8})").max_reuse_distance == 100'000'000);
  CHECK(ds(R"({"stage": 3, "max_reuse_distance": 0})").max_reuse_distance == 0);
  CHECK_THROWS_AS(ds(R"({"stage": 3, "stage3_max_reuse_distance": -1})"), InputError);
  CHECK_THROWS_AS(ds(R"({"stage": 3, "stage3_max_reuse_distance": 0.5})"), InputError);
}
