#include "sim/cli/memory_view.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/memory/deepspeed_estimate.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// What each of zerosim's components counts (sim/memory/memory.hpp), per GPU.
const std::map<std::string, std::string>& component_meaning() {
  static const std::map<std::string, std::string> m = {
      {"params_fp16", "16-bit parameters: 2 B/param over the shard ranks (stages 1-2: all)"},
      {"grads_fp16", "16-bit gradients: 2 B/param over the shard ranks (stage 1: all)"},
      {"optimizer_fp32", "FP32 master weights, Adam momentum and variance: 12 B/param sharded"},
      {"optimizer_step_grads_fp32",
       "FP32 gradients of one optimizer sub-group (sub_group_size) beyond the freed buffers"},
      {"hpz_secondary", "hpZ's intra-node 16-bit copy: 2 B/param over the hpZ group"},
      {"gathered_params", "16-bit modules gathered: held for reuse and prefetched"},
      {"grad_buckets", "16-bit gradient buckets being reduced (reduce_bucket_size)"},
      {"quant_buffers", "qwZ INT8 gathered copies and scales, qgZ INT4 buffers"},
      {"activations", "activations kept for backward (checkpoints or every layer's)"},
      {"reserved", "the framework's reserved bytes (CUDA context, allocator)"},
      {"unit_params", "FSDP: the units' gathered parameters in flight"},
  };
  return m;
}

std::string component_table(const MemoryEstimate& mem) {
  std::string o;
  for (const auto& [name, bytes] : mem.components) {
    const auto it = component_meaning().find(name);
    o += fmt::format("  {:<26} {:>11}  {}\n", name, gib(bytes),
                     it == component_meaning().end() ? "" : it->second);
  }
  o += fmt::format("  {:<26} {:>11}  of {} ({})\n", "total", gib(mem.peak_bytes),
                   gib(mem.capacity_bytes), mem.fits ? "fits" : "does not fit");
  return o;
}

// The estimator's row for the scenario's offload devices (NVMe as the host: the estimator
// tabulates cpu only, and the GPU side is the same).
Zero3EstimateRow row_for(const Strategy& st, const Zero3EstimateInputs& in) {
  const bool opt = st.offload_optimizer != OffloadDevice::None;
  const bool par = opt && st.offload_param != OffloadDevice::None;
  return zero3_estimate(in, opt, par, true);
}

struct Term {
  std::string name, deepspeed, zerosim;
  double deepspeed_bytes = 0, zerosim_bytes = 0;
};

std::string term_table(const std::vector<Term>& rows) {
  std::string o = fmt::format("  {:<15} {:<28} {:>11}   {:<36} {:>11}   {}\n", "term", "DeepSpeed",
                              "", "zerosim", "", "difference");
  for (const Term& t : rows) {
    const double d = t.zerosim_bytes - t.deepspeed_bytes;
    o += fmt::format("  {:<15} {:<28} {:>11}   {:<36} {:>11}   {}{}\n", t.name, t.deepspeed,
                     gib(t.deepspeed_bytes), t.zerosim, gib(t.zerosim_bytes), d < 0 ? "-" : "+",
                     gib(std::abs(d)));
  }
  return o;
}

// The term-by-term difference against DeepSpeed's row for the scenario.
std::string terms(const StepResult& r, const Zero3EstimateInputs& in, const LargestLayer& big) {
  const Strategy& st = r.scenario.strategy;
  const MemoryEstimate& mem = r.memory;
  const Zero3EstimateRow row = row_for(st, in);
  const double P = static_cast<double>(in.total_params);
  const int G = r.scenario.world_size, S = st.shard_ranks(G);
  const bool opt = row.offload_optimizer, par = row.offload_param;
  // The estimator's GPU model states, bytes per parameter over every GPU (Python's int()).
  const int ds_per_param = opt ? (par ? 0 : 2) : 18;
  const double ds_states = static_cast<double>(static_cast<std::int64_t>(ds_per_param * P / G));
  const double zs_states =
      mem.component("params_fp16") + mem.component("grads_fp16") + mem.component("optimizer_fp32");
  const double zs_gather = mem.component("gathered_params");
  const double zs_step = mem.component("optimizer_step_grads_fp32");
  const std::string shard = S == G ? "" : fmt::format(" (over {} shard ranks)", S);
  const std::vector<Term> rows = {
      {"model states", fmt::format("{} B/param / {} GPUs", ds_per_param, G),
       "params + grads + optimizer_fp32" + shard, ds_states, zs_states},
      {"gathered",
       fmt::format("4 B x largest layer {:.1f}M", static_cast<double>(big.params) / 1e6),
       "gathered_params", 4 * static_cast<double>(big.params), zs_gather},
      {"optimizer step", "-", "optimizer_step_grads_fp32", 0, zs_step},
      {"not estimated", "-", "the other components", 0,
       mem.peak_bytes - zs_states - zs_gather - zs_step},
      {"total", "", "", static_cast<double>(row.gpu_bytes), mem.peak_bytes},
  };
  std::string o = fmt::format("Term by term against DeepSpeed's row {}:\n", row.options());
  o += term_table(rows);
  if (st.offload_optimizer == OffloadDevice::Nvme || st.offload_param == OffloadDevice::Nvme)
    o += "NVMe offload: the estimator tabulates cpu only; its GPU side is the same.\n";
  if (!opt)
    o += "model states: DeepSpeed's code multiplies by 18 with no split; zerosim counts the 16 "
         "that ZeRO-3 keeps\n(2 FP16 parameters + 2 FP16 gradients + 12 FP32 master weights, "
         "Adam momentum and variance)\nand has no term for the other 2.\n";
  else
    o += fmt::format(
        "model states: DeepSpeed counts the 16-bit parameters on the GPU{}; zerosim also the "
        "16-bit\ngradient partition the backward reduces into before the copy to the host.\n",
        par ? " (none: offloaded)" : "");
  o += fmt::format(
      "gathered: DeepSpeed's 4 bytes per parameter of the largest module ({}: its own\n"
      "parameters, model_to_params); zerosim's 16-bit modules held for reuse "
      "(stage3_max_reuse_distance {:g}) and prefetched.\n",
      big.name, static_cast<double>(st.max_reuse_distance));
  o += fmt::format(
      "optimizer step: zerosim's FP32 gradients of one sub-group (sub_group_size {:g}) beyond "
      "the buffers\nfreed by then; the estimator has none.\n",
      static_cast<double>(st.sub_group_elems));
  o += "not estimated: the estimator counts model states only; zerosim also hpz_secondary, "
       "grad_buckets,\nquant_buffers, activations and reserved.\n";
  if (r.has_offload)
    o += fmt::format("per CPU: DeepSpeed {} per node; zerosim's host memory per node {}.\n",
                     gib(static_cast<double>(row.cpu_bytes)), gib(r.offload.host_bytes_per_node));
  return o;
}

}  // namespace

std::string memory_view(const StepResult& r) {
  const ScenarioEcho& sc = r.scenario;
  const Strategy& st = sc.strategy;
  const LargestLayer big = largest_layer(sc.model);
  const Zero3EstimateInputs in{sc.params, big.params, sc.gpus_per_node, sc.nodes, 1.5};
  std::string o = fmt::format(
      "Memory per GPU: {} on {} x {} {} ({} GPUs), model {} ({:.2f}B params), micro-batch {} x "
      "seq {}, activation checkpointing {}\n\n",
      st.name(), sc.nodes, sc.gpus_per_node, sc.gpu_model, sc.world_size, sc.model.name,
      static_cast<double>(sc.params) / 1e9, sc.micro_batch_sequences, sc.seq_len,
      sc.activation_checkpointing ? "on" : "off");
  o += "zerosim (this scenario, peak per GPU):\n" + component_table(r.memory);
  o += fmt::format(
      "\nDeepSpeed's estimator for the same model and cluster "
      "(estimate_zero3_model_states_mem_needs_all_live,\ndeepspeed/runtime/zero/stage3.py; "
      "additional_buffer_factor 1.5): total_params {}, largest_layer_params {} ({})\n",
      sc.params, big.params, big.name);
  o += format_zero3_estimate(in) + "\n";
  if (st.family() == StrategyFamily::Fsdp || st.stage != 3)
    return o + fmt::format(
                   "DeepSpeed's estimator is ZeRO-3's over every GPU; {} shards differently, so "
                   "there is no row to compare term by term.\n",
                   st.name());
  return o + terms(r, in, big);
}

}  // namespace zerosim::cli
