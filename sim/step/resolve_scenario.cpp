// resolve(): each part of a Scenario checked and filled in the order resolve_scenario.hpp gives,
// the cluster built last; unfit_refusal(): what no node count can make fit, from the parts of the
// memory estimate that no schedule changes.
#include "sim/step/resolve_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/step/micro_batch.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/topology/node_types.hpp"

namespace zerosim {

namespace {

// A group of ranks a strategy sizes: hpZ's secondary partition, HSDP's shard group.
struct GroupSize {
  int flag_value;      // 0: not given
  const char* flag;    // "--hpz-size"
  const char* needs;   // the rule when the flag is given without the strategy having the group
  const char* what;    // "hpZ group size"
  const char* config;  // the DeepSpeed config's key
};

// `size` from the flag when given, else the strategy's (a DeepSpeed config's), GPUs per node when
// neither; with the group `on`, it must divide the world and divide, or be a multiple of, the GPUs
// per node (ranks are node-contiguous). Errors name the flag, or the config's key.
void resolve_group_size(int& size, bool on, const GroupSize& g, const std::string& deepspeed,
                        const ClusterShape& topo) {
  if (g.flag_value > 0) {
    if (!on) throw flag_error(g.flag, g.needs);
    size = g.flag_value;
  }
  if (!on) return;
  const int W = topo.gpu_count, N = topo.gpus_per_node;
  const std::string file = deepspeed.empty() ? "<command line>" : deepspeed;
  const std::string where = deepspeed.empty() ? g.flag : g.config;
  if (size == 0) size = N;
  if (W % size != 0)
    throw InputError(file, where,
                     fmt::format("{} {} must divide the world size {} ({} nodes x {} GPUs)", g.what,
                                 size, W, topo.nodes, N));
  if (N % size != 0 && size % N != 0)
    throw InputError(file, where,
                     fmt::format("{} {} must divide, or be a multiple of, the {} GPUs per node "
                                 "(ranks are node-contiguous)",
                                 g.what, size, N));
}

// A node's host memory in bytes.
double host_capacity_bytes(const NodeTypeSpec& nt) {
  return nt.host_memory_GiB * 1024.0 * 1024 * 1024;
}

// The DeepSpeed config key that turns on the offload named `param` (for messages).
const char* offload_key(const Strategy& st) {
  return st.offload_optimizer != OffloadDevice::None ? "/zero_optimization/offload_optimizer/device"
                                                     : "/zero_optimization/offload_param/device";
}

// ZeRO-Offload's rates from the cluster's node type (sim/topology/node_types.hpp): its PCIe
// generation, host memory and NVMe drives. A cluster of no known node type cannot offload, and a
// node whose host memory cannot hold what is offloaded to it is refused before any work.
void resolve_offload(const Scenario& sc, Resolved& r, std::int64_t params) {
  const Strategy& st = r.setup.strategy;
  if (!st.offloads()) return;
  const ClusterShape& topo = r.shape;
  const NodeTypeSpec* nt = find_node_type(topo.node_type);
  if (!nt)
    throw InputError(sc.deepspeed, offload_key(st),
                     fmt::format("offloading needs the node's PCIe rate and host memory, known for "
                                 "the builder node types only; the cluster's node type is '{}'",
                                 topo.node_type));
  const double N = topo.gpus_per_node;
  OffloadRates& o = r.setup.offload;
  o.pcie_Bps = nt->pcie_GBps * 1e9 * kPcieCopyEfficiency;
  o.host_adam_pps = kHostAdamParamsPerS / N;
  o.nvme_Bps = nt->nvme_drives * kNvmeDriveGBps * 1e9 / N;
  if (o.nvme_Bps <= 0 &&
      (st.offload_optimizer == OffloadDevice::Nvme || st.offload_param == OffloadDevice::Nvme))
    throw InputError(sc.deepspeed, offload_key(st),
                     fmt::format("\"nvme\": node type {} has no NVMe drives", nt->name));
  const OffloadFootprint& f = r.footprint =
      offload_footprint(st, static_cast<double>(params), topo.gpu_count);
  const double host_bytes = f.host_bytes * N;
  const double capacity = r.host_capacity_bytes = host_capacity_bytes(*nt);
  if (host_bytes > capacity)
    throw InputError(
        sc.deepspeed, offload_key(st),
        fmt::format("the offloaded states need {} of host memory per node ({} per GPU x {} "
                    "GPUs), more than the {} of a {} node",
                    format_bytes(host_bytes), format_bytes(f.host_bytes), topo.gpus_per_node,
                    format_bytes(capacity), nt->name));
}

// Bytes per element of an FSDP MixedPrecision dtype; Auto is `fallback`.
int dtype_bytes(FsdpDtype value, int fallback) {
  return value == FsdpDtype::Auto ? fallback : value == FsdpDtype::Fp32 ? 4 : 2;
}

// FSDP1's knobs given to fsdp2 (FSDP2 has no rate limiter and prefetches one module implicitly:
// _fsdp_param_group.py), or FSDP2's to an FSDP1 strategy: an error, not ignored.
void check_fsdp_version_flags(const Scenario& sc, const Strategy& st) {
  const Scenario defaults;
  const bool fsdp2 = st.fsdp.sharding == FsdpSharding::FullyShard;
  if (!fsdp2) {
    if (sc.fsdp_reshard_after_forward != defaults.fsdp_reshard_after_forward)
      throw flag_error("--fsdp-reshard-after-forward",
                       fmt::format("is FSDP2's (fully_shard); needs --strategy fsdp2, not {} "
                                   "(FSDP1's SHARD_GRAD_OP is fsdp-grad-op)",
                                   st.name()));
    return;
  }
  const std::pair<const char*, bool> fsdp1_only[] = {
      {"--fsdp-backward-prefetch", sc.fsdp_backward_prefetch != defaults.fsdp_backward_prefetch},
      {"--fsdp-forward-prefetch", sc.fsdp_forward_prefetch != defaults.fsdp_forward_prefetch},
      {"--fsdp-limit-all-gathers", sc.fsdp_limit_all_gathers != defaults.fsdp_limit_all_gathers}};
  for (const auto& [flag, set] : fsdp1_only)
    if (set)
      throw flag_error(flag,
                       "is FSDP1's; fsdp2 (fully_shard) has no rate limiter and prefetches the "
                       "next module implicitly");
}

// FSDP2's reshard_after_forward (checked by the scenario schema's rule): a group size must divide
// the world and be smaller than it (fully_shard: "a non-trivial divisor of the mesh shard dim").
void resolve_fsdp2(const Scenario& sc, Strategy& st, const ClusterShape& topo) {
  if (st.fsdp.sharding != FsdpSharding::FullyShard) return;
  const std::string& v = sc.fsdp_reshard_after_forward;
  if (const std::string rule =
          scenario_param_rule(*find_scenario_param("--fsdp-reshard-after-forward"), v);
      !rule.empty())
    throw flag_error("--fsdp-reshard-after-forward", rule);
  if (v == "true" || v == "false") {
    st.fsdp.reshard_after_forward = v == "true" ? FsdpOptions::kReshardToShards : 0;
    return;
  }
  // A non-trivial divisor of the mesh's shard dimension (_fully_shard.py, fully_shard's
  // reshard_after_forward): the world, or the shard size of a 2-D mesh.
  const int n = std::stoi(v), W = topo.gpu_count, N = topo.gpus_per_node, D = st.shard_ranks(W);
  if (n >= D || D % n != 0)
    throw flag_error("--fsdp-reshard-after-forward",
                     st.hybrid() ? fmt::format("{} must be a divisor of the mesh's shard dimension "
                                               "{} (--hsdp-size) smaller than it",
                                               n, D)
                                 : fmt::format("{} must be a divisor of the world size {} smaller "
                                               "than it",
                                               n, W));
  if (N % n != 0 && n % N != 0)
    throw flag_error("--fsdp-reshard-after-forward",
                     fmt::format("{} must divide, or be a multiple of, the {} GPUs per node (ranks "
                                 "are node-contiguous)",
                                 n, N));
  st.fsdp.reshard_after_forward = n;
}

// PyTorch FSDP's knobs from their flags (checked by the scenario schema). Given to a strategy of
// another family they are an error, not ignored.
void resolve_fsdp(const Scenario& sc, Strategy& st) {
  const Scenario defaults;
  if (st.family() != StrategyFamily::Fsdp) {
    const std::pair<const char*, bool> given[] = {
        {"--fsdp-backward-prefetch", sc.fsdp_backward_prefetch != defaults.fsdp_backward_prefetch},
        {"--fsdp-forward-prefetch", sc.fsdp_forward_prefetch != defaults.fsdp_forward_prefetch},
        {"--fsdp-limit-all-gathers", sc.fsdp_limit_all_gathers != defaults.fsdp_limit_all_gathers},
        {"--fsdp-param-dtype", sc.fsdp_param_dtype != defaults.fsdp_param_dtype},
        {"--fsdp-reduce-dtype", sc.fsdp_reduce_dtype != defaults.fsdp_reduce_dtype},
        {"--fsdp-reshard-after-forward",
         sc.fsdp_reshard_after_forward != defaults.fsdp_reshard_after_forward}};
    for (const auto& [flag, set] : given)
      if (set)
        throw flag_error(flag, fmt::format("needs an FSDP strategy (fsdp, fsdp-grad-op, "
                                           "fsdp-hybrid or fsdp2), not {}",
                                           st.name()));
    return;
  }
  check_fsdp_version_flags(sc, st);
  FsdpOptions& f = st.fsdp;
  f.backward_prefetch = sc.fsdp_backward_prefetch;
  f.forward_prefetch = sc.fsdp_forward_prefetch;
  f.limit_all_gathers = sc.fsdp_limit_all_gathers;
  // The training dtype's width: 2 (bf16 from Ampere on, fp16 before).
  f.param_bytes = dtype_bytes(sc.fsdp_param_dtype, 2);
  st.grad_comm_bytes = dtype_bytes(sc.fsdp_reduce_dtype, f.param_bytes);
}

// The strategy from --strategy or the DeepSpeed config, with the flags that refine it checked.
void resolve_strategy(const Scenario& sc, Resolved& r) {
  StepSetup& setup = r.setup;
  const ClusterShape& topo = r.shape;
  setup.strategy =
      sc.deepspeed.empty() ? parse_strategy(sc.strategy) : load_deepspeed(sc.deepspeed);
  Strategy& st = setup.strategy;
  if (!sc.fsdp_config.empty()) st.source = sc.fsdp_config;
  // A Scenario filled in code has not met the schema's check of the flags.
  if (const std::string rule = deepspeed_version_rule(sc.deepspeed_version); !rule.empty())
    throw flag_error("--deepspeed-version", rule);
  st.deepspeed_version = parse_deepspeed_version(sc.deepspeed_version);
  // Flags name no training dtype: BF16 where the GPU has it (Ampere on), else FP16, as users run.
  if (sc.deepspeed.empty()) st.dtype = r.prof->nccl.arch != GpuArch::Volta ? "bf16" : "fp16";
  // What a config left "auto", filled as Hugging Face's Trainer does; said in the warnings.
  r.filled = resolve_auto(st, setup.model.hidden, r.prof->nccl.arch != GpuArch::Volta);
  resolve_group_size(
      st.hpz_size, st.hpz,
      {sc.hpz_partition, "--hpz-size", "needs hpZ in the strategy (e.g. zero3+hpz or zeropp)",
       "hpZ group size", "/zero_optimization/zero_hpz_partition_size"},
      sc.deepspeed, topo);
  // FSDP2 is hybrid on a 2-D mesh, which --hsdp-size asks for; hsdp and fsdp-hybrid always are.
  const bool fsdp2 = st.fsdp.sharding == FsdpSharding::FullyShard;
  resolve_group_size(st.shard_size, st.hybrid_by_name() || (fsdp2 && sc.hsdp_size > 0),
                     {sc.hsdp_size, "--hsdp-size", "needs --strategy hsdp, fsdp-hybrid or fsdp2",
                      st.hsdp ? "HSDP shard group size"
                      : fsdp2 ? "FSDP2 mesh's shard dimension"
                              : "HYBRID_SHARD shard group size",
                      "/zero_optimization/mics_shard_size"},
                     sc.deepspeed, topo);
  resolve_fsdp(sc, st);
  resolve_fsdp2(sc, st, topo);
  if (sc.quant_bits_weights != 8 && sc.quant_bits_weights != 4)
    throw flag_error("--qwz-bits",
                     fmt::format("qwZ quantizes to 8 or 4 bits, not {}", sc.quant_bits_weights));
  if (sc.quant_bits_grads != 4)
    throw flag_error("--qgz-bits", fmt::format("qgZ's kernels quantize gradients to 4 bits, not {}",
                                               sc.quant_bits_grads));
  st.weight_bits = sc.quant_bits_weights;
  st.grad_bits = sc.quant_bits_grads;
  if (sc.qgz_chunks < 1) throw flag_error("--qgz-chunks", "must be at least 1");
  st.qgz_chunks = sc.qgz_chunks;
}

// --attention: flash or eager as asked; auto is FlashAttention where both the GPU (Ampere and
// later: FlashAttention-2 needs sm80, nothing of it runs on a V100) and the model's
// training stack have it (trains_with_flash_attention), else eager.
void resolve_attention(const Scenario& sc, Resolved& r) {
  const bool gpu_has_flash = r.prof->nccl.arch != GpuArch::Volta;
  if (sc.attention == AttentionChoice::Flash && !gpu_has_flash)
    throw flag_error("--attention",
                     fmt::format("FlashAttention needs an Ampere or later GPU; the {} is {} (use "
                                 "eager or auto)",
                                 r.shape.gpu_model, gpu_arch_key(r.prof->nccl.arch)));
  const bool flash = sc.attention == AttentionChoice::Flash ||
                     (sc.attention == AttentionChoice::Auto && gpu_has_flash &&
                      trains_with_flash_attention(r.setup.model));
  r.setup.attention = flash ? AttentionImpl::Flash : AttentionImpl::Eager;
}

// The sequence length, and the model as a run of that length builds it (a learned position table
// has one row per position: with_sequence_length), before anything counts its parameters.
void resolve_sequence(const Scenario& sc, Resolved& r) {
  if (sc.seq_len < 0) throw flag_error("--seq-len", "must be positive");
  r.setup.seq = sc.seq_len > 0 ? sc.seq_len : r.setup.model.seq;
  const int rows = r.setup.model.position_rows;
  if (r.setup.model.learned_positions && rows > 0 && r.setup.seq > rows)
    throw flag_error("--seq-len",
                     fmt::format("{} is longer than the model's learned position table ({} rows: "
                                 "a position beyond it has no embedding)",
                                 r.setup.seq, rows));
  r.setup.model = with_sequence_length(std::move(r.setup.model), r.setup.seq);
}

// Tokens per micro-step and accumulation, checked against the config's batch.
void resolve_batch(const Scenario& sc, Resolved& r) {
  StepSetup& setup = r.setup;
  const Strategy& st = setup.strategy;
  const int W = r.shape.gpu_count;
  if (st.micro_batch_sequences > 0) {  // the config's, unless a flag gives another
    const std::int64_t own = st.micro_batch_sequences;
    if (sc.micro_batch > 0 || sc.tokens_per_gpu > 0) {
      const std::int64_t given = micro_batch_sequences(sc, setup.seq);
      if (given != own)
        throw flag_error(micro_batch_source(sc),
                         fmt::format("a micro-batch of {} sequences contradicts {}'s "
                                     "train_micro_batch_size_per_gpu {}: give one of them",
                                     given, sc.deepspeed, own));
    }
    setup.tokens = own * setup.seq;
  } else {
    setup.tokens = micro_batch_sequences(sc, setup.seq) * setup.seq;
  }
  setup.grad_accum = st.grad_accum > 0 ? st.grad_accum : sc.grad_accum;
  if (setup.grad_accum < 1) throw flag_error("--grad-accum", "must be at least 1");
  const std::int64_t batch = std::int64_t{W} * (setup.tokens / setup.seq) * setup.grad_accum;
  if (st.train_batch_size > 0 && st.train_batch_size != batch)
    throw InputError(
        sc.deepspeed, "/train_batch_size",
        fmt::format("{} contradicts micro-batch x accumulation x GPUs = {} x {} x {} "
                    "= {} sequences",
                    st.train_batch_size, setup.tokens / setup.seq, setup.grad_accum, W, batch));
}

// The bytes per GPU of a resolved scenario's step that no schedule changes, on `world` GPUs: its
// memory estimate without the parts that follow the lowered schedule (the gathered weights, the
// gradient buckets, qwZ's and qgZ's buffers, the optimizer step's FP32 sub-group), that is the
// model states, hpZ's secondary copy, FSDP's unsharded units, the activations and the reserve. A
// lower bound of the estimate's peak whatever the lowering gives those parts (each is >= 0).
double schedule_free_bytes(const Resolved& r, ModuleCache& modules, int world) {
  const std::vector<GradBucket> no_buckets;
  MemoryInputs mi = memory_inputs(r, modules, world);
  mi.prefetch_depth = 0;
  mi.prefetched_elems = 0;
  mi.live_elems = 0;
  mi.buckets = &no_buckets;
  mi.max_held_elems = 0;  // the gathered weights follow the schedule: not counted here
  const MemoryEstimate e = estimate_memory(mi);
  constexpr const char* kScheduled[] = {"gathered_params", "grad_buckets", "quant_buffers",
                                        "optimizer_step_grads_fp32"};
  double bytes = 0;
  for (const auto& [name, b] : e.components)
    if (std::find(std::begin(kScheduled), std::end(kScheduled), name) == std::end(kScheduled))
      bytes += b;
  return bytes;
}

}  // namespace

MemoryInputs memory_inputs(const Resolved& r, ModuleCache& modules, int world) {
  const StepSetup& setup = r.setup;
  MemoryInputs mi;
  mi.model = &setup.model;
  mi.strategy = &setup.strategy;
  mi.world = world;
  mi.gpus_per_node = r.shape.gpus_per_node;
  mi.tokens = setup.tokens;
  mi.seq = setup.seq;
  mi.checkpointing = setup.checkpointing;
  mi.attention = setup.attention;
  mi.capacity_bytes = static_cast<double>(r.prof->memory_bytes);
  mi.reserved_bytes = r.prof->memory_reserved_bytes;
  mi.modules = &modules;
  return mi;
}

// The refusal, naming the flag that can fix it, of a resolved scenario that no node count can make
// fit: on as many GPUs as --nodes could give, the model states ZeRO shards over the world vanish,
// and what is left (schedule_free_bytes) exceeds the GPU. A lower bound of the peak that simulating
// it would give, so whatever it refuses would have been simulated as not fitting. nullopt: some
// node count may fit it.
std::optional<UnfitRefusal> unfit_refusal(const Resolved& r, ModuleCache& modules) {
  constexpr int kManyGpus = 1 << 30;
  const double need = schedule_free_bytes(r, modules, kManyGpus);
  const double capacity = static_cast<double>(r.prof->memory_bytes);
  if (need <= capacity) return std::nullopt;
  const std::string what = fmt::format(
      "the configuration does not fit in GPU memory on any number of nodes: what no schedule or "
      "node count reduces (activations, unsharded model states, the reserve) needs {} per GPU, "
      "the GPU has {}",
      format_bytes(need), format_bytes(capacity));
  const Strategy& st = r.setup.strategy;
  if (st.stage < 3 || st.hsdp)  // as plan::zero3_shards_more
    return UnfitRefusal{
        need, flag_error("--strategy", what + "; more nodes cannot help, ZeRO-3 shards more")};
  if (r.setup.tokens / r.setup.seq > 1)
    return UnfitRefusal{need, flag_error("--micro-batch", what + "; more nodes cannot help, a "
                                                                 "smaller micro-batch can")};
  return UnfitRefusal{
      need, flag_error("--seq-len", what + "; more nodes cannot help, shorter sequences can")};
}

// The scenario resolved and validated (InputError naming the flag or JSON path), in the order its
// parts are checked: the cluster's shape and size limit, profile, model and sequence length,
// strategy, batch and, with `build` and the context's refuse_unfit_early, whether any node count
// can make it fit (refuse_unfit). A builder preset's graph is built after every check (and only
// with `build`), so that a refused scenario costs no topology, lowering or network; an explicit
// graph is read first, as its shape is known only then.
Resolved resolve(const Scenario& sc, SimContext& context, bool labels, bool build) {
  Resolved r;
  FileCache& files = context.files();
  const ClusterOverrides ov{sc.nodes,
                            sc.nics_per_node,
                            sc.nic_gbps,
                            sc.fabric,
                            sc.oversubscription,
                            tier_max_gpus(sc.tier),
                            fmt::format("the {} tier", choice_name(sc.tier)),
                            unfolded_max_gpus()};
  if (std::optional<ClusterShape> shape = builder_shape(sc.cluster, ov, &files)) {
    r.shape = std::move(*shape);
  } else {
    r.topo = context.clusters().get(sc.cluster, ov, files);
    r.shape = shape_of(*r.topo);
  }
  r.prof = shared_select_cost_profile(sc.profile, r.shape.gpu_model, &files, r.shape.node_type);
  r.setup.model = load_model(sc.model, &files);
  resolve_sequence(sc, r);
  resolve_strategy(sc, r);
  resolve_offload(sc, r, context.modules().total_params(r.setup.model));
  resolve_batch(sc, r);
  resolve_attention(sc, r);
  r.setup.checkpointing = sc.activation_checkpointing;
  r.setup.labels = labels;
  // FSDP gathers one unit ahead: the next block's all-gather is issued as soon as the rate limiter
  // allows (see lower_fsdp.cpp). DeepSpeed's look-ahead is its coordinator's, run by the lowering
  // (LoweredStep::prefetch_runs).
  r.setup.prefetch_depth = r.setup.strategy.family() == StrategyFamily::Fsdp ? 1 : 0;
  if (!build) return r;
  if (context.modes().refuse_unfit_early)
    if (std::optional<UnfitRefusal> no = unfit_refusal(r, context.modules())) throw no->error;
  if (!r.topo) r.topo = context.clusters().get(sc.cluster, ov, files);
  return r;
}

}  // namespace zerosim
