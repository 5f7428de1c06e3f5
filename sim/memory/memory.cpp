#include "sim/memory/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/units.hpp"
#include "sim/strategy/buckets.hpp"
#include "sim/strategy/fetch_trace.hpp"
#include "sim/strategy/quant_groups.hpp"
#include "sim/workload/module_cache.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

double MemoryEstimate::component(const std::string& name) const {
  for (const auto& [n, b] : components)
    if (n == name) return b;
  return 0;
}

namespace {

// What does not fit, naming the three largest parts (empty when it fits); the peak and the verdict.
void finish(MemoryEstimate& e, double capacity) {
  for (const auto& [_, b] : e.components) e.peak_bytes += b;
  e.capacity_bytes = capacity;
  e.fits = e.peak_bytes <= e.capacity_bytes;
  if (e.fits) return;
  auto sorted = e.components;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto& a, auto& b) { return a.second > b.second; });
  e.warning = fmt::format(
      "does not fit in GPU memory: needs {} per GPU, the GPU has {} (over by {}); largest parts: "
      "{} {}, {} {}, {} {}",
      format_bytes(e.peak_bytes), format_bytes(e.capacity_bytes),
      format_bytes(e.peak_bytes - e.capacity_bytes), sorted[0].first,
      format_bytes(sorted[0].second), sorted[1].first, format_bytes(sorted[1].second),
      sorted[2].first, format_bytes(sorted[2].second));
}

// PyTorch FSDP (FSDP1, flat parameters per unit: each transformer block, and the root holding the
// embedding, final norm and head). Sharded over S ranks and kept in FP32 outside forward and
// backward (MixedPrecision: "the sharded parameters are kept in full precision"): the
// FlatParameter shard, its gradient shard (_saved_grad_shard, cast back to the parameter dtype by
// _cast_grad_to_param_dtype) and Adam's two moments, 4 + 4 + 8 bytes per parameter / S. Unsharded
// in param_dtype: the root unit from its forward to the end of its backward (the root is not
// resharded after forward, _post_forward_reshard), and the blocks the rate limiter lets be
// gathered at once (_limiter_utils.py: a new all-gather is issued once the free of the unit two
// frees back is waited on, so the running unit, the gathered one and, with BACKWARD_PRE or
// forward_prefetch, the one being gathered ahead: 2 or 3 blocks); without limit_all_gathers the
// CPU may issue every block's all-gather before the GPU computes the first (all blocks);
// SHARD_GRAD_OP keeps every unit unsharded from its forward to its backward (the whole model).
// Unsharded gradients: the root's, accumulated over the whole backward, and the unit computing
// its gradient and the unit being reduce-scattered, each in param_dtype plus its reduce_dtype copy
// when the two differ (_post_backward_hook).
//
// FSDP2 (fully_shard) has no rate limiter: in forward a unit's all-gather output is held until the
// next unit's copy-out (AllGatherState) and the all-gather after next may start once this unit's
// copy-out is done, so the running block's parameters and three all-gather outputs: 4 blocks
// besides the root. reshard_after_forward false keeps the whole model; an int n keeps each
// block's 1/n after forward.
double fsdp2_unsharded_elems(const FsdpOptions& f, double psi, double root, double block,
                             double layers) {
  const int r = f.reshard_after_forward;
  if (r == 0) return psi;
  return root + std::min(layers, 4.0) * block + (r > 1 ? (psi - root) / r : 0);
}

MemoryEstimate fsdp_memory(const MemoryInputs& in, const std::vector<Module>& modules, double psi) {
  const Strategy& s = *in.strategy;
  const double S = s.shard_ranks(in.world);
  double root = 0, block = 0, blocks = 0;
  std::vector<double> per_layer;
  for (const Module& m : modules) {
    const auto n = static_cast<double>(m.param_elems());
    if (m.kind != ModuleKind::Layer) {
      root += n;
      continue;
    }
    const auto l = static_cast<std::size_t>(m.layer);
    if (per_layer.size() <= l) per_layer.resize(l + 1, 0);
    per_layer[l] += n;
  }
  for (const double n : per_layer) block = std::max(block, n);
  const FsdpOptions& f = s.fsdp;
  const double p = f.param_bytes, r = s.grad_comm_bytes;
  const double layers = static_cast<double>(per_layer.size());
  if (!f.limit_all_gathers)
    blocks = layers;
  else
    blocks = std::min(
        layers, f.forward_prefetch || f.backward_prefetch == BackwardPrefetch::Pre ? 3.0 : 2.0);
  const double unsharded = f.sharding == FsdpSharding::FullyShard
                               ? fsdp2_unsharded_elems(f, psi, root, block, layers)
                           : f.sharding == FsdpSharding::ShardGradOp ? psi
                                                                     : root + blocks * block;
  MemoryEstimate e;
  e.components = {
      {"params_shard_fp32", 4 * psi / S},
      {"grads_shard_fp32", 4 * psi / S},
      {"optimizer_fp32", 8 * psi / S},
      {"unsharded_params", p * unsharded},
      {"unsharded_grads", (p + (r != p ? r : 0)) * (root + 2 * block)},
      {"activations",
       activation_bytes(*in.model, in.tokens, in.seq, in.checkpointing, in.attention)},
      {"reserved", in.reserved_bytes},
  };
  finish(e, in.capacity_bytes);
  return e;
}

}  // namespace

namespace {

// The largest gradient bucket (elements) and, under qgZ, the most bytes of its per-tensor buffers
// (qgz_buffer_bytes) any bucket needs.
struct BucketPeaks {
  double max_bucket = 0;
  double qgz_buffers = 0;
};
BucketPeaks bucket_peaks(const MemoryInputs& in, const std::vector<Module>& modules) {
  const Strategy& s = *in.strategy;
  const bool qgz_active = s.qgz && in.world > in.gpus_per_node;
  BucketPeaks p;
  const auto max_of = [&](const std::vector<GradBucket>& buckets) {
    for (const auto& b : buckets) {
      p.max_bucket = std::max(p.max_bucket, static_cast<double>(b.elems()));
      if (qgz_active)
        p.qgz_buffers =
            std::max(p.qgz_buffers, qgz_buffer_bytes(b, in.world, in.gpus_per_node, s.grad_bits));
    }
  };
  if (in.buckets)
    max_of(*in.buckets);
  else
    max_of(make_grad_buckets(modules, s.reduce_bucket_elems, qgz_active, in.world,
                             qgz_divisibility_fallback(s.deepspeed_version)));
  return p;
}

// Stage 3's optimizer steps its partition in sub-groups of sub_group_size elements and holds an
// FP32 copy of one sub-group's gradients while it does (DeepSpeed stage3.py,
// _create_fp16_sub_groups and _prepare_fp32_grad_for_sub_group), after the backward's transient
// buffers are freed: it raises the peak only by what it exceeds them by.
void add_optimizer_step_grads(MemoryEstimate& e, const Strategy& s, double partition_elems) {
  if (s.stage != 3 || s.offload_optimizer != OffloadDevice::None) return;
  const double sub_group = 4 * std::min(partition_elems, static_cast<double>(s.sub_group_elems));
  double transient = 0;
  for (const auto& [name, b] : e.components)
    if (name == "gathered_params" || name == "grad_buckets" || name == "quant_buffers" ||
        name == "activations")
      transient += b;
  for (auto& [name, b] : e.components)
    if (name == "optimizer_step_grads_fp32") b = std::max(0.0, sub_group - transient);
}

}  // namespace

MemoryEstimate estimate_memory(const MemoryInputs& in) {
  const ModelShape& m = *in.model;
  const Strategy& s = *in.strategy;
  // Model states are sharded over S ranks: the world, or the HSDP group.
  const double S = s.shard_ranks(in.world);
  const double psi =
      static_cast<double>(in.modules ? in.modules->total_params(m) : total_param_count(m));
  const auto shared =
      in.modules ? in.modules->modules(m, in.tokens, in.seq)
                 : std::make_shared<const std::vector<Module>>(build_modules(m, in.tokens, in.seq));
  const std::vector<Module>& modules = *shared;
  if (s.family() == StrategyFamily::Fsdp) return fsdp_memory(in, modules, psi);
  double max_gather = 0;
  const Module* max_module = nullptr;
  for (const auto& mod : modules)
    if (static_cast<double>(mod.gather_elems) > max_gather) {
      max_gather = static_cast<double>(mod.gather_elems);
      max_module = &mod;
    }
  const auto [max_bucket, qgz_buffers] = bucket_peaks(in, modules);
  const double live = in.prefetch_depth + 1;  // the running module and the prefetched ones
  const double prefetched =
      in.prefetched_elems >= 0 ? in.prefetched_elems : in.prefetch_depth * max_gather;
  // Gathered 16-bit weights: the running module's, those kept for a later run
  // (stage3_max_reuse_distance) and the prefetched modules'.
  double held = 0;
  if (s.stage == 3)
    held = static_cast<double>(
        in.max_held_elems >= 0
            ? in.max_held_elems
            : max_held_elems(fetch_trace(modules, in.checkpointing, s.max_reuse_distance),
                             modules));
  // qwZ's INT8 receive buffers and their FP32 scales: the gathers in flight and the one being
  // dequantized (the largest all_gather_coalesced call, the lowering's; else the largest
  // module), each freed once dequantized; the scales at that gather's share (qwz_scale_bytes
  // over the whole shard group).
  const bool call = in.largest_call_elems > 0;
  const double largest = call ? in.largest_call_elems : max_gather;
  const double int8_elems = in.prefetched_elems >= 0 ? prefetched + largest : live * max_gather;
  double scale_share = 0;
  if (s.qwz && call)
    scale_share = in.largest_call_scale_bytes / largest;
  else if (s.qwz && max_module != nullptr && max_gather > 0)
    scale_share =
        qwz_scale_bytes(*max_module, static_cast<int>(S), static_cast<int>(S)) / max_gather;

  MemoryEstimate e;
  e.components = {
      // Stages 1 and 2 keep the whole FP16 model; stage 1 its whole gradient too.
      // Offloaded (ZeRO-Offload): the parameter partition in host memory or on NVMe.
      {"params_fp16", s.stage < 3                              ? 2 * psi
                      : s.offload_param != OffloadDevice::None ? 0
                                                               : 2 * psi / S},
      {"grads_fp16", s.stage == 1 ? 2 * psi : 2 * psi / S},
      // Master weights, Adam momentum and variance; offloaded: off the GPU.
      {"optimizer_fp32", s.offload_optimizer != OffloadDevice::None ? 0 : 12 * psi / S},
      {"hpz_secondary", s.hpz ? 2 * psi / s.hpz_size : 0},
      {"gathered_params",
       s.stage < 3 ? 0 : 2 * (in.live_elems >= 0 ? in.live_elems : held + prefetched)},
      {"grad_buckets", 2 * max_bucket},
      // INT8 gathered copies + scales of the modules in flight; qgZ's per-tensor buffers
      // (qgz_buffer_bytes) of the bucket that needs the most.
      {"quant_buffers", (s.qwz ? int8_elems + int8_elems * scale_share : 0) + qgz_buffers},
      {"activations", activation_bytes(m, in.tokens, in.seq, in.checkpointing, in.attention)},
      {"optimizer_step_grads_fp32", 0},
      {"reserved", in.reserved_bytes},
  };
  add_optimizer_step_grads(e, s, psi / S);
  finish(e, in.capacity_bytes);
  return e;
}

OffloadFootprint offload_footprint(const Strategy& s, double psi, int world) {
  const double part = psi / s.shard_ranks(world);
  OffloadFootprint f;
  if (s.offload_optimizer == OffloadDevice::Cpu) f.host_bytes += 16 * part;
  if (s.offload_optimizer == OffloadDevice::Nvme) f.nvme_bytes += 12 * part;
  if (s.offload_param == OffloadDevice::Cpu) f.host_bytes += 2 * part;
  if (s.offload_param == OffloadDevice::Nvme) f.nvme_bytes += 2 * part;
  return f;
}

json to_json(const MemoryEstimate& m) {
  json comps = json::object();
  for (const auto& [n, b] : m.components) comps[n] = b;
  json j = json::object();
  j.emplace("peak_bytes_per_gpu", m.peak_bytes);
  j.emplace("capacity_bytes", m.capacity_bytes);
  j.emplace("fits", m.fits);
  j.emplace("components", std::move(comps));
  return j;
}

}  // namespace zerosim
