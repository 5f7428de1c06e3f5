// ZeRO-Offload and ZeRO-Infinity (DeepSpeed's offload_optimizer / offload_param, devices cpu and
// nvme) end to end on 2 DGX H100 nodes (16 GPUs) with llama-3-8b: the bytes each mode moves over
// PCIe and to the NVMe drives per step against their closed forms, the GPU memory each frees
// (12 psi / W for the optimizer states, 2 psi / W more for the parameters), the host memory per
// node, CPU Adam's and the copies' time, a step that cannot overlap its copies slowing down by at
// least their time, the published offload configs against their hand-resolved equivalents, and
// the errors (exit 2 naming the key).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "sim/step/lower.hpp"
#include "sim/step/simulate.hpp"
#include "sim/topology/node_types.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/files.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/run_cli.hpp"

using namespace zerosim;

namespace {

constexpr double W = 16, N = 8;         // 2 nodes x 8 GPUs
constexpr std::int64_t kTokens = 8192;  // one llama-3 sequence per GPU per micro-step
const std::string kPublished = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/published/";

double psi() { return static_cast<double>(total_param_count(load_model("llama-3-8b"))); }
// Elements gathered in one micro-step: its forward's and backward's gathers (fetch_trace, with
// DeepSpeed's default reuse distance).
double gathered_per_microstep() {
  const auto mods = build_modules(load_model("llama-3-8b"), kTokens, 8192);
  double n = 0;
  for (const FetchRun& r : fetch_trace(mods, true, Strategy{}.max_reuse_distance))
    if (r.gather) n += static_cast<double>(mods[static_cast<std::size_t>(r.module)].gather_elems);
  return n;
}
double pcie_Bps() { return find_node_type("dgx-h100")->pcie_GBps * 1e9 * kPcieCopyEfficiency; }

Scenario base() {
  Scenario s;
  s.cluster = "dgx-h100";
  s.nodes = 2;
  s.model = "llama-3-8b";
  s.tokens_per_gpu = kTokens;
  s.tier = NetworkTier::Analytic;
  return s;
}

// A result for a DeepSpeed config whose zero_optimization is `zero` (BF16, no "auto").
struct Run {
  ScratchDir dir{"offload"};
  StepResult operator()(const std::string& zero, int grad_accum = 1,
                        NetworkTier tier = NetworkTier::Analytic) {
    const auto path = dir.path / "ds.json";
    spit(path, fmt::format(R"({{"bf16": {{"enabled": true}}, "zero_optimization": {}}})", zero));
    Scenario s = base();
    s.deepspeed = path.string();
    s.grad_accum = grad_accum;
    s.tier = tier;
    return simulate(s);
  }
};

std::string z(int stage, const std::string& opt, const std::string& param,
              const std::string& extra = "") {
  std::string j = fmt::format(R"({{"stage": {})", stage);
  auto block = [](const char* key, const std::string& dev) {
    if (dev.empty()) return std::string();
    return fmt::format(R"(, "{}": {{"device": "{}", "pin_memory": true{}}})", key, dev,
                       dev == "nvme" ? R"(, "nvme_path": "/local_nvme")" : "");
  };
  return j + block("offload_optimizer", opt) + block("offload_param", param) + extra + "}";
}

}  // namespace

TEST_CASE("bytes over PCIe and to NVMe per step: the closed form of each offload mode") {
  Run run;
  const double P = psi(), g = gathered_per_microstep();
  struct Case {
    int stage;
    const char* opt;
    const char* param;
    int G;
    double h2d, d2h, nvme_read, nvme_write;
  };
  // Optimizer offload: each micro-step's reduced 16-bit gradient partition to the host (stage 1
  // reduces only in the last micro-step), the updated 16-bit partition back after CPU Adam.
  // Parameter offload: every gather (forward and backward, each micro-step) copies the rank's
  // shard in; the updated partition goes back to the host after the GPU's optimizer; with both,
  // CPU Adam writes it in place. NVMe: the 12 bytes of optimizer state per parameter are read and
  // written once a step, the parameter shard is read before its copy in.
  const Case cases[] = {
      {3, "cpu", "", 1, 2 * P / W, 2 * P / W, 0, 0},
      {3, "cpu", "", 2, 2 * P / W, 2 * 2 * P / W, 0, 0},
      {3, "cpu", "", 4, 2 * P / W, 4 * 2 * P / W, 0, 0},  // extended accumulation
      {2, "cpu", "", 3, 2 * P / W, 3 * 2 * P / W, 0, 0},
      {1, "cpu", "", 3, 2 * P / W, 2 * P / W, 0, 0},
      {3, "", "cpu", 1, 2 * g / W, 2 * P / W, 0, 0},
      {3, "", "cpu", 3, 3 * 2 * g / W, 2 * P / W, 0, 0},
      {3, "cpu", "cpu", 1, 2 * g / W, 2 * P / W, 0, 0},
      {3, "cpu", "cpu", 4, 4 * 2 * g / W, 4 * 2 * P / W, 0, 0},
      {3, "nvme", "", 1, 2 * P / W, 2 * P / W, 12 * P / W, 12 * P / W},
      {3, "nvme", "nvme", 2, 2 * 2 * g / W, 2 * 2 * P / W, 12 * P / W + 2 * 2 * g / W,
       12 * P / W + 2 * P / W},
      {3, "", "nvme", 1, 2 * g / W, 2 * P / W, 2 * g / W, 2 * P / W},
  };
  for (const Case& c : cases) {
    CAPTURE(c.stage);
    CAPTURE(c.opt);
    CAPTURE(c.param);
    CAPTURE(c.G);
    const StepResult r = run(z(c.stage, c.opt, c.param), c.G);
    REQUIRE(r.has_offload);
    const OffloadResult& o = r.offload;
    CHECK(o.h2d_bytes_per_gpu == zerosim::testing::Approx(c.h2d).epsilon(1e-12));
    CHECK(o.d2h_bytes_per_gpu == zerosim::testing::Approx(c.d2h).epsilon(1e-12));
    CHECK(o.nvme_read_bytes_per_gpu == zerosim::testing::Approx(c.nvme_read).epsilon(1e-12));
    CHECK(o.nvme_write_bytes_per_gpu == zerosim::testing::Approx(c.nvme_write).epsilon(1e-12));
    // Every byte at the PCIe rate: the copies' busy time.
    CHECK(r.breakdown.offload_copy_s ==
          zerosim::testing::Approx((c.h2d + c.d2h) / pcie_Bps()).epsilon(1e-9));
    CHECK(o.pcie_Bps == pcie_Bps());
    // The breakdown still adds up to the step.
    const StepTimeBreakdown& b = r.breakdown;
    CHECK(b.compute_s + b.recompute_s + b.optimizer_s + b.param_fetch_s + b.exposed_comm.total_s +
              b.exposed_kernels_s + b.exposed_offload_s + b.idle_s ==
          zerosim::testing::Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("GPU memory drops by 12 psi / W (optimizer) and 2 psi / W more (parameters)") {
  Run run;
  const double P = psi();
  const StepResult none = run(z(3, "", "")), opt = run(z(3, "cpu", "")),
                   both = run(z(3, "cpu", "cpu")), nvme = run(z(3, "nvme", "nvme"));
  CHECK_FALSE(none.has_offload);
  CHECK(none.memory.peak_bytes - opt.memory.peak_bytes ==
        zerosim::testing::Approx(12 * P / W).epsilon(1e-12));
  CHECK(opt.memory.peak_bytes - both.memory.peak_bytes ==
        zerosim::testing::Approx(2 * P / W).epsilon(1e-12));
  CHECK(nvme.memory.peak_bytes == both.memory.peak_bytes);
  CHECK(opt.memory.component("optimizer_fp32") == 0);
  CHECK(both.memory.component("params_fp16") == 0);
  // Host memory per node: FP32 states and gradient partition (16 B) and the 16-bit partition
  // (2 B) of each of the node's 8 ranks; NVMe holds the 12 + 2 bytes instead.
  CHECK(both.offload.host_bytes_per_node ==
        zerosim::testing::Approx(N * 18 * P / W).epsilon(1e-12));
  CHECK(both.offload.host_capacity_bytes_per_node == 2048.0 * (1 << 30));
  CHECK(nvme.offload.host_bytes_per_node == 0);
  CHECK(nvme.offload.nvme_bytes_per_node ==
        zerosim::testing::Approx(N * 14 * P / W).epsilon(1e-12));
  // Stage 2 with optimizer offload: the same 12 psi / W.
  CHECK(run(z(2, "", "")).memory.peak_bytes - run(z(2, "cpu", "")).memory.peak_bytes ==
        zerosim::testing::Approx(12 * P / W).epsilon(1e-12));
}

TEST_CASE("CPU Adam replaces the GPU optimizer, and the step pays for what cannot overlap") {
  Run run;
  const double P = psi();
  for (const NetworkTier tier : {NetworkTier::Analytic, NetworkTier::Flow}) {
    CAPTURE(tier);
    const StepResult none = run(z(3, "", ""), 1, tier), opt = run(z(3, "cpu", ""), 1, tier);
    CHECK(opt.breakdown.optimizer_s == 0);
    CHECK(none.breakdown.host_optimizer_s == 0);
    // The node's CPU Adam rate shared by its 8 ranks, each updating psi / W parameters.
    const double adam = (P / W) / (kHostAdamParamsPerS / N);
    CHECK(opt.breakdown.host_optimizer_s == zerosim::testing::Approx(adam).epsilon(1e-12));
    // CPU Adam and the copy of the updated parameters back follow the last backward: nothing
    // overlaps them. The gradient copies may hide behind the backward.
    const double h2d = 2 * P / W / pcie_Bps();
    CHECK(opt.step_time_s >= none.step_time_s - none.breakdown.optimizer_s + adam + h2d - 1e-12);
    CHECK(opt.breakdown.exposed_offload_s >= adam + h2d - 1e-12);
  }
  // Parameter offload with nothing prefetched (max_live_parameters 0, as Axolotl's configs): each
  // module's copy in precedes its gather on the critical path, so every copy in is exposed. (The
  // step need not grow by as much: a gather delayed by its copy overlaps less of the backward's
  // reduce-scatters and shares the links with them for less time, on both tiers.)
  const std::string no_prefetch = R"(, "stage3_max_live_parameters": 0)";
  for (const NetworkTier tier : {NetworkTier::Analytic, NetworkTier::Flow}) {
    CAPTURE(tier);
    const StepResult par = run(z(3, "", "cpu", no_prefetch), 1, tier);
    CHECK(par.breakdown.exposed_offload_s >=
          par.offload.h2d_bytes_per_gpu / pcie_Bps() * (1 - 1e-9));
  }
}

TEST_CASE("published offload configs load unchanged and equal their hand-resolved configs") {
  ScratchDir tmp("offload_published");
  // "auto" filled for llama-3-8b on H100: reduce_bucket_size = 4096^2, prefetch = 0.9 x 4096^2;
  // dtype: BF16 where bf16 may be chosen, else FP16.
  struct Case {
    const char* file;
    const char* resolved;
  };
  const Case cases[] = {
      {"axolotl-zero3_bf16_cpuoffload_all.json",
       R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 3,
         "offload_optimizer": {"device": "cpu", "pin_memory": true},
         "offload_param": {"device": "cpu", "pin_memory": true}, "reduce_bucket_size": 16777216,
         "stage3_prefetch_bucket_size": 15099494, "max_live_parameters": 0,
         "stage3_max_reuse_distance": 0}})"},
      {"axolotl-zero3_bf16_cpuoffload_params.json",
       R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 3,
         "offload_param": {"device": "cpu", "pin_memory": true}, "reduce_bucket_size": 16777216,
         "stage3_prefetch_bucket_size": 15099494, "max_live_parameters": 0,
         "stage3_max_reuse_distance": 0}})"},
      {"accelerate-zero_stage3_offload_config.json",
       R"({"fp16": {"enabled": true}, "gradient_accumulation_steps": 1, "zero_optimization": {
         "stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true},
         "offload_param": {"device": "cpu", "pin_memory": true}, "reduce_bucket_size": 16777216,
         "stage3_prefetch_bucket_size": 15099494}})"},
      {"transformers-tests-ds_config_zero3.json",
       R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 3,
         "offload_optimizer": {"device": "cpu", "pin_memory": true},
         "offload_param": {"device": "cpu", "pin_memory": true}, "reduce_bucket_size": 16777216,
         "stage3_prefetch_bucket_size": 15099494}})"},
      {"accelerate-zero_stage2_offload_config.json",
       R"({"fp16": {"enabled": true}, "gradient_accumulation_steps": 1, "zero_optimization": {
         "stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true},
         "allgather_bucket_size": 200000000, "reduce_bucket_size": 16777216}})"},
      {"transformers-tests-ds_config_zero2.json",
       R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2,
         "offload_optimizer": {"device": "cpu", "pin_memory": true},
         "allgather_bucket_size": 200000000, "reduce_bucket_size": 200000000}})"},
      {"axolotl-zero2.json",
       R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2,
         "offload_optimizer": {"device": "cpu"}}})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const auto resolved = tmp.path / "resolved.json";
    spit(resolved, c.resolved);
    Scenario a = base(), b = base();
    a.deepspeed = kPublished + c.file;
    b.deepspeed = resolved.string();
    const StepResult ra = simulate(a), rb = simulate(b);
    CHECK(ra.has_offload);
    CHECK(ra.step_time_s == rb.step_time_s);
    CHECK(ra.breakdown == rb.breakdown);
    CHECK(ra.comm == rb.comm);
    CHECK(ra.memory.components == rb.memory.components);
    CHECK(ra.offload == rb.offload);
    CHECK(ra.scenario.strategy.offload_optimizer == rb.scenario.strategy.offload_optimizer);
    CHECK(ra.scenario.strategy.offload_param == rb.scenario.strategy.offload_param);
  }
  // Axolotl's stage-2 config leaves pin_memory at DeepSpeed's default (false): said.
  Scenario a = base();
  a.deepspeed = kPublished + "axolotl-zero2.json";
  bool said = false;
  for (const auto& w : simulate(a).warnings)
    said = said || w.find("pin_memory") != std::string::npos;
  CHECK(said);
  // Its stage-3 persistence threshold is read and said to be not modelled; its reuse distance (0)
  // is modelled: every backward run gathers again.
  a.deepspeed = kPublished + "axolotl-zero3_bf16_cpuoffload_params.json";
  const StepResult r = simulate(a);
  int unmodelled = 0;
  for (const auto& w : r.warnings)
    unmodelled += w.find("is read but not modelled") != std::string::npos;
  CHECK(unmodelled == 1);
  CHECK(r.scenario.strategy.max_reuse_distance == 0);
}

TEST_CASE("offload errors exit 2 naming the key") {
  ScratchDir tmp("offload_errors");
  auto cli = [&](const std::string& zero, const std::string& cluster =
                                              "--cluster dgx-h100 "
                                              "--nodes 2 --model "
                                              "llama-3-8b") {
    const auto path = tmp.path / "ds.json";
    spit(path, fmt::format(R"({{"bf16": {{"enabled": true}}, "zero_optimization": {}}})", zero));
    return run(fmt::format("simulate {} --tier analytic --deepspeed {}", cluster, path.string()));
  };
  // An unknown key in an offload block.
  auto r = cli(R"({"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memoryy": true}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_optimizer") != std::string::npos);
  CHECK(r.out.find("pin_memoryy") != std::string::npos);
  r = cli(R"({"stage": 3, "offload_param": {"device": "cpu", "fast_init": true}})");
  CHECK(r.rc == 2);  // fast_init belongs to offload_optimizer
  CHECK(r.out.find("fast_init") != std::string::npos);
  r = cli(R"({"stage": 3, "offload_param": {"device": "gpu"}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_param/device") != std::string::npos);
  r = cli(R"({"stage": 2, "offload_param": {"device": "cpu"}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("needs stage 3") != std::string::npos);
  r = cli(R"({"stage": 3, "offload_optimizer": {"device": "nvme"}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("nvme_path") != std::string::npos);
  r = cli(R"({"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.5}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_optimizer/ratio") != std::string::npos);
  r = cli(R"({"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/x",
              "pipeline_read": true}})");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_optimizer/pipeline_read") != std::string::npos);
  // A node type without a known host: the explicit example graph.
  r = cli(R"({"stage": 3, "offload_optimizer": {"device": "cpu"}})",
          "--cluster " + std::string(ZEROSIM_SOURCE_DIR) +
              "/topologies/example-2x2-explicit.json --model llama-3-8b");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_optimizer/device") != std::string::npos);
  // More host memory than the node has: gpt-138b's 18 bytes per parameter on one DGX-2 (1.5 TiB).
  r = cli(
      R"({"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}})",
      "--cluster dgx2-v100 --nodes 1 --model gpt-138b --tokens-per-gpu 1024");
  CHECK(r.rc == 2);
  CHECK(r.out.find("/zero_optimization/offload_optimizer/device") != std::string::npos);
  CHECK(r.out.find("host memory") != std::string::npos);
  // "none" stays accepted, with every documented key.
  r = cli(R"({"stage": 3, "offload_optimizer": {"device": "none", "pin_memory": false,
              "buffer_count": 4, "fast_init": false, "ratio": 1.0, "pipeline_read": false,
              "pipeline_write": false, "nvme_path": null}, "offload_param": {"device": "none",
              "buffer_count": 5, "buffer_size": 100000000, "max_in_cpu": 1000000000}})");
  CHECK(r.rc == 0);
}
