// simulate(): a Scenario resolved (resolve_scenario.hpp), lowered to a StepProgram, run on the
// chosen network tier, and its StepResult assembled: time, breakdown, communication, memory and
// warnings.
#include "sim/step/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/memory/memory.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/network_model.hpp"
#include "sim/step/accumulation.hpp"
#include "sim/step/breakdown.hpp"
#include "sim/step/compute_model.hpp"
#include "sim/step/fsdp_config_scenario.hpp"
#include "sim/step/lower.hpp"
#include "sim/step/micro_batch.hpp"
#include "sim/step/resolve_scenario.hpp"
#include "sim/step/trace.hpp"
#include "sim/topology/cluster_shape.hpp"
#include "sim/topology/node_types.hpp"

namespace zerosim {

namespace {

// Names of CommPhase values, in its order.
constexpr const char* kPhases[] = {"backward_all_gather", "forward_all_gather",
                                   "gradient_reduction", "parameter_all_gather"};

struct Bytes {
  double inter = 0, intra = 0;
};

// Payload bytes of one collective by tier, from the shared per-byte plan of its shape (no per-rank
// flows: qgZ's 32768-GPU inter-node all-to-all would be 134M of them). The step repeats a few
// shapes (kind, algorithm, group list) many times: their per-byte figures are kept in a short list
// found by the group list's address (a lowered step shares a handful of lists), and an op's bytes
// are per-byte figures x op.bytes, as FabricPlans::stats computes them. comm_result asks once per
// collective class (StepProgram::collective_class).
class ByteCounter {
 public:
  ByteCounter(const Topology& topo, const CostProfile& prof, std::shared_ptr<FabricPlans> plans)
      : topo_(topo), prof_(prof), plans_(std::move(plans)) {}
  Bytes operator()(const CollectiveOp& op) {
    if (!(op.bytes > 0) || !std::isfinite(op.bytes)) {  // FabricPlans::stats throws the size rule
      const NetStats st = plans_->stats(op, topo_, prof_);
      return Bytes{st.inter_node_bytes, st.intra_node_bytes};
    }
    const auto* groups = &op.groups.get();
    const UnitPlan* plan = nullptr;
    for (const Shape& s : shapes_)
      if (s.groups == groups && s.kind == op.kind && s.algorithm == op.algorithm) {
        plan = &s.plan;
        break;
      }
    if (!plan) {
      shapes_.push_back(Shape{groups, op.kind, op.algorithm, plans_->get(op, topo_, prof_)});
      plan = &shapes_.back().plan;  // the list is not touched again before its use
    }
    const NetStats st = plan->stats(op.bytes);
    return Bytes{st.inter_node_bytes, st.intra_node_bytes};
  }

 private:
  struct Shape {
    const GroupList::Groups* groups;
    CollKind kind;
    Algorithm algorithm;
    UnitPlan plan;
  };
  const Topology& topo_;
  const CostProfile& prof_;
  std::shared_ptr<FabricPlans> plans_;
  std::vector<Shape> shapes_;
};

// Adds one collective's bytes and busy time (their `share`) to a "by_collective" / "by_phase"
// entry, and counts it there unless `counted` is false.
void add(CommTotals& t, const Bytes& b, double seconds, double share = 1, bool counted = true) {
  t.inter_node_bytes += share * b.inter;
  t.intra_node_bytes += share * b.intra;
  t.count += counted ? 1 : 0;
  t.busy_s += share * seconds;
}
// The other gather phase of a gather split between the forward and the backward.
CommPhase other_gather_phase(CommPhase p) {
  return p == CommPhase::ForwardGather ? CommPhase::BackwardGather : CommPhase::ForwardGather;
}

CommResult comm_result(const LoweredStep& low, const CollectiveClasses& classes,
                       const RunResult& run, const Topology& topo, const CostProfile& prof,
                       std::shared_ptr<FabricPlans> plans) {
  ByteCounter count(topo, prof, std::move(plans));
  constexpr int kKinds = static_cast<int>(CollKind::SendRecv) + 1;
  CommTotals by_kind[kKinds], by_phase[std::size(kPhases)];
  // Bytes per collective class, read in place below (a copy returned through the stack was
  // reloaded at once as one vector, a stall per op).
  const StepProgram& p = low.program;
  std::vector<Bytes> class_bytes;
  class_bytes.reserve(classes.first().size());
  for (const int f : classes.first())
    class_bytes.push_back(f >= 0 ? count(p.collectives[static_cast<std::size_t>(f)]) : Bytes{});
  // Per collective, the share of its bytes in its own phase (a gather split between the forward
  // and the backward: the rest in the other, where it is not counted again).
  std::vector<double> share;
  if (!low.phase_splits.empty()) {
    share.assign(p.collectives.size(), 1.0);
    for (const LoweredStep::PhaseSplit& x : low.phase_splits) share[x.collective] = x.share;
  }
  for (std::size_t s = 0; s < low.collective_slots.size(); ++s)
    for (const LoweredStep::CollectiveSlot& slot : low.collective_slots[s]) {
      const OpTiming& t = run.lanes[s][static_cast<std::size_t>(slot.timed)];
      const auto k = static_cast<std::size_t>(slot.collective);
      const Bytes& b = class_bytes[classes.of(k)];
      add(by_kind[static_cast<int>(p.collectives[k].kind)], b, t.end - t.start);
      const double own = share.empty() ? 1.0 : share[k];
      add(by_phase[static_cast<int>(low.collective_phase[k])], b, t.end - t.start, own);
      if (own < 1)
        add(by_phase[static_cast<int>(other_gather_phase(low.collective_phase[k]))], b,
            t.end - t.start, 1 - own, false);
    }
  CommResult c;
  for (int k = 0; k < kKinds; ++k)
    if (by_kind[k].count > 0)
      c.by_collective.emplace(to_string(static_cast<CollKind>(k)), by_kind[k]);
  for (std::size_t ph = 0; ph < std::size(kPhases); ++ph)
    if (by_phase[ph].count > 0 || by_phase[ph].busy_s > 0)
      c.by_phase.emplace(kPhases[ph], by_phase[ph]);
  c.inter_node_bytes = run.net.inter_node_bytes;
  c.intra_node_bytes = run.net.intra_node_bytes;
  c.collectives = low.program.collectives.size();
  c.flows = run.net.flows;
  return c;
}

// The breakdown's parts by name, as the result reports them.
StepTimeBreakdown time_breakdown(const StepBreakdown& bd) {
  auto busy = [&](const char* k) { return bd.busy_s.count(k) ? bd.busy_s.at(k) : 0.0; };
  auto exposed = [&](const char* k) {
    return bd.exposed_comm_s.count(k) ? bd.exposed_comm_s.at(k) : 0.0;
  };
  StepTimeBreakdown b;
  b.compute_s = busy("compute");
  b.recompute_s = busy("recompute");
  b.optimizer_s = busy("optimizer");
  b.param_fetch_s = bd.exposed_fetch_s;
  b.quant_kernels_s = busy("quant_kernel");
  b.other_kernels_s = busy("other");
  b.exposed_comm.all_gather_s = exposed("all_gather");
  b.exposed_comm.reduce_scatter_s = exposed("reduce_scatter");
  b.exposed_comm.all_to_all_s = exposed("all_to_all");
  b.exposed_comm.all_reduce_s = exposed("all_reduce");
  b.exposed_comm.total_s = bd.exposed_comm_total_s;
  b.exposed_kernels_s = bd.exposed_kernels_s;
  b.idle_s = bd.compute_idle_s;
  b.offload_copy_s = busy("offload_copy");
  b.nvme_io_s = busy("nvme_io");
  b.host_optimizer_s = busy("host_optimizer");
  b.exposed_offload_s = bd.exposed_offload_s;
  return b;
}

// The strategy as the result echoes it: the batch fields a DeepSpeed config may set are echoed
// by the scenario's own fields (micro_batch_sequences, grad_accum), not by the strategy.
Strategy echoed_strategy(Strategy s) {
  const Strategy defaults;
  s.micro_batch_sequences = defaults.micro_batch_sequences;
  s.grad_accum = defaults.grad_accum;
  s.train_batch_size = defaults.train_batch_size;
  s.auto_dtypes = defaults.auto_dtypes;
  s.offload_pageable = defaults.offload_pageable;
  s.unmodelled_keys = defaults.unmodelled_keys;
  s.keys_without_effect = defaults.keys_without_effect;
  s.sub_group_elems = defaults.sub_group_elems;  // its effect is the memory's optimizer_step term
  return s;
}

MemoryEstimate memory_of(const Resolved& r, const LoweredStep& low, ModuleCache& modules) {
  const StepSetup& setup = r.setup;
  MemoryInputs mi = memory_inputs(r, modules, r.topo->gpu_count());
  const bool deepspeed = setup.strategy.family() != StrategyFamily::Fsdp;
  mi.prefetch_depth = deepspeed ? low.prefetch_runs : setup.prefetch_depth;
  if (deepspeed) {
    mi.prefetched_elems = static_cast<double>(low.prefetched_elems);
    mi.live_elems = static_cast<double>(low.live_elems);
    mi.largest_call_elems = static_cast<double>(low.largest_call_elems);
    mi.largest_call_scale_bytes = low.largest_call_scale_bytes;
  }
  mi.buckets = &low.buckets;
  mi.max_held_elems = low.max_held_elems;
  return estimate_memory(mi);
}

// What the result warns of: memory, filled "auto" values, what a DeepSpeed config decides instead
// of the command line (never silently), a raised micro-batch, qgZ's fallback.
std::vector<std::string> warnings_of(const Scenario& sc, const Resolved& r, const LoweredStep& low,
                                     const MemoryEstimate& mem) {
  const StepSetup& setup = r.setup;
  const Strategy& st = setup.strategy;
  std::vector<std::string> warnings;
  if (!mem.fits) warnings.push_back("memory: " + mem.warning);
  for (const auto& f : r.filled) warnings.push_back("DeepSpeed config: " + f);
  if (!sc.deepspeed.empty()) {
    std::string from = "the strategy";
    if (st.micro_batch_sequences > 0)
      from +=
          fmt::format(", the micro-batch (train_micro_batch_size_per_gpu {} = {} tokens per GPU)",
                      st.micro_batch_sequences, setup.tokens);
    if (st.grad_accum > 0)
      from += fmt::format(", the accumulation (gradient_accumulation_steps {})", st.grad_accum);
    warnings.push_back("DeepSpeed config: " + from + " come from " + sc.deepspeed +
                       ", not from --strategy/--micro-batch/--tokens-per-gpu/--grad-accum");
  }
  if (st.offload_pageable)
    warnings.push_back(
        "offload: pin_memory is false (DeepSpeed's default) in an offload block; its host <-> GPU "
        "copies are priced at the pinned rate, pageable ones are slower");
  if (st.unmodelled_keys & Strategy::kUnmodelledPersistence)
    warnings.push_back(
        "DeepSpeed config: stage3_param_persistence_threshold is read but not modelled: every "
        "parameter is gathered with its module, as with a threshold of 0 (the tensors under "
        "DeepSpeed's default threshold, biases and norms, are below 0.1% of the weights of the "
        "shipped models)");
  if (!st.keys_without_effect.empty()) {
    std::string keys;
    for (const std::string& k : st.keys_without_effect) keys += (keys.empty() ? "" : ", ") + k;
    warnings.push_back(
        "DeepSpeed config: accepted without effect on step time or memory (docs/step-model.md, "
        "\"DeepSpeed configs\"): " +
        keys);
  }
  if (st.offload_optimizer != OffloadDevice::None)
    warnings.push_back(fmt::format(
        "offload: CPU Adam at {:.2g} parameters/s per node, ZeRO-Offload's measurement on a DGX-2 "
        "host (newer hosts may be up to 2-3x faster)",
        kHostAdamParamsPerS));
  if (sc.tier == NetworkTier::Flow)
    if (const std::string why = missing_rotation(*r.topo); !why.empty())
      warnings.push_back("flow tier: " + why +
                         ": no folding, every node's flows are simulated (the full model; equal "
                         "flows are still merged by equitable partitions), at a cost that grows "
                         "with the GPUs (docs/performance.md)");
  if (st.qgz && !low.qgz_active)
    warnings.push_back(
        "qgZ falls back to the FP16 reduce-scatter on a single node (no inter-node hop)");
  // Megatron's formula knows dense GPT layers only: for experts or latent attention its figure is
  // not the model's FLOPs at all.
  if (setup.model.moe() || setup.model.arch.mla.kv_lora_rank > 0)
    warnings.push_back(
        "throughput: TFLOPs/GPU is Megatron-LM's formula for dense GPT layers and does not count "
        "this model's experts or latent attention; MFU and HFU count its architecture");
  return warnings;
}

// The scenario as the result echoes it: the cluster's and the setup's resolved values.
ScenarioEcho echo_of(const Scenario& sc, const Resolved& r, std::int64_t params,
                     std::int64_t active_params) {
  const Topology& topo = *r.topo;
  const StepSetup& setup = r.setup;
  ScenarioEcho echo;
  echo.cluster = sc.cluster;
  echo.node_type = topo.node_type();
  echo.gpu_model = topo.gpu_model();
  echo.nodes = topo.node_count();
  echo.gpus_per_node = topo.gpus_per_node();
  echo.world_size = topo.gpu_count();
  echo.nics_per_node = topo.nics_per_node();
  echo.nic_gbps = topo.nic_Bps() / kGbpsToBps;
  echo.fabric = topo.fabric();
  echo.oversubscription = topo.oversubscription();
  echo.model = setup.model;
  echo.params = params;
  echo.active_params = active_params;
  echo.strategy = echoed_strategy(setup.strategy);
  echo.tokens_per_gpu = setup.tokens;
  echo.seq_len = setup.seq;
  echo.seq_len_source = sc.seq_len > 0                   ? "--seq-len"
                        : setup.model.seq_source.empty() ? "the model's \"seq\""
                                                         : setup.model.seq_source;
  echo.micro_batch_sequences = setup.tokens / setup.seq;
  echo.grad_accum = setup.grad_accum;
  echo.activation_checkpointing = setup.checkpointing;
  echo.attention = to_string(setup.attention);
  echo.sm_share = sc.sm_share;
  echo.prefetch_depth = setup.prefetch_depth;
  echo.profile_name = r.prof->name;
  echo.profile_status = r.prof->status;
  echo.tier = choice_name(sc.tier);
  return echo;
}

// Step time, throughput and FLOPs: the Megatron formula's, and those the GPUs actually execute
// (counted per GEMM and attention matmul, recompute included; the formula assumes GPT shapes, so
// the counted ones are the numbers to read for GQA / gated-MLP models).
void add_throughput(StepResult& result, const Resolved& r, const LoweredStep& low, double step) {
  const StepSetup& setup = r.setup;
  const int W = r.topo->gpu_count();
  const double sequences =
      static_cast<double>(W) * (static_cast<double>(setup.tokens) / setup.seq) * setup.grad_accum;
  const double flops = megatron_step_flops(setup.model, sequences, setup.seq, setup.checkpointing);
  // FLOPs the GPUs actually execute (counted per GEMM and attention matmul, recompute included):
  // the Megatron formula assumes GPT shapes, so this is the number to read for GQA / gated-MLP
  // models. Model FLOPs (MFU's numerator) are the same passes without the recompute.
  // FlashAttention's backward also recomputes the scores: its attention counts 2.5 passes there.
  const double attention_extra = attention_backward_factor(setup.attention) - 2;
  double counted = 0, model = 0;
  for (const auto& m : *low.modules) {
    counted += m.forward_flops() * (m.recomputed && setup.checkpointing ? 4 : 3) +
               attention_extra * m.attention_flops;
    model += m.forward_flops() * 3;
  }
  counted *= static_cast<double>(W) * setup.grad_accum;
  model *= static_cast<double>(W) * setup.grad_accum;
  const double peak = r.prof->peak_flops;
  result.mfu_flops_per_step = model;
  result.peak_tflops_per_gpu = peak / 1e12;
  result.mfu = model / (W * step) / peak;
  result.hfu = counted / (W * step) / peak;
  result.step_time_s = step;
  result.tflops_per_gpu = flops / (W * step) / 1e12;
  result.tokens_per_s =
      static_cast<double>(W) * static_cast<double>(setup.tokens) * setup.grad_accum / step;
  result.model_flops_per_step = flops;
  result.counted_flops_per_step = counted;
  result.counted_tflops_per_gpu = counted / (W * step) / 1e12;
}

// ZeRO-Offload's bytes (of the lowered step), rates and footprint (resolve_offload's, checked
// there against the node's host memory).
OffloadResult offload_result(const Resolved& r, const LoweredStep& low) {
  const double N = r.topo->gpus_per_node();
  OffloadResult o;
  o.h2d_bytes_per_gpu = low.offload_bytes.h2d;
  o.d2h_bytes_per_gpu = low.offload_bytes.d2h;
  o.nvme_read_bytes_per_gpu = low.offload_bytes.nvme_read;
  o.nvme_write_bytes_per_gpu = low.offload_bytes.nvme_write;
  o.pcie_Bps = r.setup.offload.pcie_Bps;
  o.host_adam_params_per_s = kHostAdamParamsPerS;
  o.nvme_Bps_per_node = r.setup.offload.nvme_Bps * N;
  o.host_bytes_per_node = r.footprint.host_bytes * N;
  o.nvme_bytes_per_node = r.footprint.nvme_bytes * N;
  o.host_capacity_bytes_per_node = r.host_capacity_bytes;
  return o;
}

// The step's compute and recompute by kernel class: every module pass the program runs, priced
// by the compute model as the lowering priced its op. Each distinct module shape's terms are
// computed once (same_compute_shape), and added per module in module order.
ComputeTerms compute_kernel_terms(const LoweredStep& low, const CostProfile& prof,
                                  AttentionImpl attention) {
  const std::vector<Module>& mods = *low.modules;
  std::vector<std::pair<int, int>> runs(mods.size());  // per module: forward, backward passes
  for (const LoweredStep::ModuleOp& op : low.module_ops) {
    auto& r = runs[static_cast<std::size_t>(op.module)];
    ++(op.backward ? r.second : r.first);
  }
  struct ShapeTerms {
    const Module* proto;
    std::optional<ComputeTerms> forward, backward;
  };
  std::vector<ShapeTerms> shapes;
  ComputeTerms total;
  for (std::size_t i = 0; i < mods.size(); ++i) {
    if (runs[i].first == 0 && runs[i].second == 0) continue;
    auto shape = std::find_if(shapes.begin(), shapes.end(), [&](const ShapeTerms& s) {
      return same_compute_shape(*s.proto, mods[i]);
    });
    if (shape == shapes.end()) shape = shapes.insert(shapes.end(), ShapeTerms{&mods[i], {}, {}});
    if (runs[i].first > 0) {
      if (!shape->forward) shape->forward = forward_terms(mods[i], prof, attention);
      total += shape->forward->scaled(runs[i].first);
    }
    if (runs[i].second > 0) {
      if (!shape->backward) shape->backward = backward_terms(mods[i], prof, attention);
      total += shape->backward->scaled(runs[i].second);
    }
  }
  return total;
}

// One lowered step run on the scenario's network tier: what the result's time, breakdown and
// communication come from. The lowering and the run stay for a trace.
struct StepRun {
  std::shared_ptr<const LoweredStep> low;
  RunResult run;
  bool resumed = false;  // the run went on from a snapshot
  StepTimeBreakdown breakdown;
  CommResult comm;
};

// SM sharing (step_program.hpp SmShare; docs/step-model.md, "SM sharing with collectives"), the
// scenario's --sm-share: the profile's SM count (datasheets), and each collective holds its
// kernel's channels (nccl_kernel_channels).
SmShare sm_share(const Scenario& sc, const StepProgram& program, const CollectiveClasses& classes,
                 const CostProfile& prof) {
  SmShare share;
  if (!sc.sm_share) return share;
  share.gpu_sms = static_cast<int>(prof.compute.sm_count);
  // The channels follow the op's bytes, equal within a collective class: one count per class.
  std::vector<int> per_class;
  per_class.reserve(classes.first().size());
  for (const int f : classes.first())
    per_class.push_back(
        f >= 0 ? nccl_kernel_channels(program.collectives[static_cast<std::size_t>(f)], prof) : 0);
  share.collective_sms.reserve(program.collectives.size());
  for (std::size_t k = 0; k < program.collectives.size(); ++k)
    share.collective_sms.push_back(per_class[classes.of(k)]);
  return share;
}

// from: a snapshot of the run of this setup with one micro-step, to go on from (resume_program;
// run from the start when the program does not begin as that one). capture: filled at the
// lowering's first_micro_step_end when the run is on the engine and quiescent there.
StepRun run_step(const Scenario& sc, const StepSetup& setup, const Resolved& r, SimContext& context,
                 const RunSnapshot* from = nullptr, RunSnapshot* capture = nullptr) {
  const Topology& topo = *r.topo;
  const CostProfile& prof = *r.prof;
  StepRun out;
  // The program the snapshot was taken of, held while this step's is looked up (the cache leaves
  // a held lowering as it is).
  std::shared_ptr<const LoweredStep> source;
  if (from != nullptr) {
    StepSetup one = setup;
    one.grad_accum = 1;
    source = context.lowering().get(one, topo, r.prof);
  }
  out.low = context.lowering().get(setup, topo, r.prof);
  Engine engine;
  // One lookup of the fabric's shared plans (O(links)) for the network and the byte counts.
  std::shared_ptr<FabricPlans> plans = context.plans().get(topo, prof);
  auto net = make_network_model(sc.tier, engine, topo, prof, plans, context.modes().network);
  net->expect_ops(out.low->program.collectives);
  net->expect_classes(out.low->program.collective_class, out.low->program.collective_classes);
  const CollectiveClasses classes(out.low->program);
  const SmShare share = sm_share(sc, out.low->program, classes, prof);
  std::optional<RunResult> resumed;
  if (from != nullptr)
    resumed = resume_program(out.low->program, source->program, *from, engine, *net, share);
  out.resumed = resumed.has_value();
  if (resumed)
    out.run = std::move(*resumed);
  else if (capture != nullptr && out.low->first_micro_step_end >= 0 &&
           !runs_in_one_pass(engine, *net, share))
    out.run = run_program_on_engine(out.low->program, engine, *net, share,
                                    out.low->first_micro_step_end, capture);
  else
    out.run = run_program(out.low->program, engine, *net, share);
  out.breakdown = time_breakdown(compute_breakdown(out.low->program, out.run));
  // The kernels' own times; with SM sharing the compute ops ran longer (on the SMs the collectives
  // left), and each class takes its share of that stretch, so the classes add up to compute +
  // recompute as run.
  const ComputeTerms kernels = compute_kernel_terms(*out.low, prof, setup.attention);
  const double own = kernels.total(), ran = out.breakdown.compute_s + out.breakdown.recompute_s;
  out.breakdown.compute_kernels = own > 0 && ran != own ? kernels.scaled(ran / own) : kernels;
  out.comm = comm_result(*out.low, classes, out.run, topo, prof, std::move(plans));
  return out;
}

// What a run gives the result.
StepTiming timing_of(const StepRun& run) {
  return StepTiming{run.run.makespan_s, run.run.events, run.breakdown, run.comm,
                    run.low->offload_bytes};
}

// The timing of `setup` on the scenario's network: the context's RunMemo's, or run and kept there
// (a builder cluster, lowering reuse on).
StepTiming step_timing(const Scenario& sc, const StepSetup& setup, const Resolved& r,
                       SimContext& context) {
  if (!context.modes().lowering_reuse || r.topo->builder_key().empty())
    return timing_of(run_step(sc, setup, r, context));
  RunMemo::Key key{setup,   r.topo->builder_key(),   r.prof,
                   sc.tier, context.modes().network, sc.sm_share};
  if (std::optional<StepTiming> kept = context.runs().find(key)) return std::move(*kept);
  // A step of one micro-step leaves a snapshot at micro-step 0's end; the step of two goes on
  // from it instead of running micro-step 0 again.
  std::shared_ptr<const RunSnapshot> from;
  if (setup.grad_accum == 2) {
    RunMemo::Key one = key;
    one.setup.grad_accum = 1;
    from = context.runs().take_snapshot(one);
  }
  auto snapshot = setup.grad_accum == 1 ? std::make_shared<RunSnapshot>() : nullptr;
  const StepRun run = run_step(sc, setup, r, context, from.get(), snapshot.get());
  if (run.resumed) context.runs().count_resumed();
  StepTiming t = timing_of(run);
  if (snapshot && snapshot->event < 0) snapshot.reset();
  context.runs().keep(std::move(key), t, std::move(snapshot));
  return t;
}

}  // namespace

std::optional<UnfitRefusal> unfit_refusal(const Scenario& given, SimContext& context) {
  const FileCache::Round round(context.files());
  const FsdpConfiguredScenario configured = apply_fsdp_config(given);
  const Resolved r = resolve(configured.scenario, context, false, /*build=*/false);
  return unfit_refusal(r, context.modules());
}

void refuse_if_cannot_fit(const Scenario& scenario, SimContext& context) {
  if (std::optional<UnfitRefusal> no = unfit_refusal(scenario, context)) throw no->error;
}

StepResult simulate(const Scenario& sc, const std::string& trace_path) {
  // One call reads each file once: watching them for a next call would only cost system calls.
  ReferenceModes modes;
  modes.file_watch = false;
  SimContext context(modes);
  return simulate(sc, context, trace_path);
}

StepResult simulate(const Scenario& given, SimContext& context, const std::string& trace_path) {
  // The files are checked for changes once, here: the call sees them as they are now, or later.
  const FileCache::Round round(context.files());
  const FsdpConfiguredScenario configured = apply_fsdp_config(given);  // --fsdp-config's settings
  const Scenario& sc = configured.scenario;
  const Resolved r = resolve(sc, context, !trace_path.empty());  // labels: read by the trace only
  const int G = r.setup.grad_accum;
  StepResult result;
  // The step that the result reports (G micro-steps, or 2 when extended): its setup, its timing
  // and, for a trace, its whole run.
  StepSetup setup = r.setup;
  std::optional<StepRun> traced;
  const auto final_timing = [&]() -> StepTiming {
    if (trace_path.empty()) return step_timing(sc, setup, r, context);
    traced = run_step(sc, setup, r, context);
    return timing_of(*traced);
  };
  StepTiming step;
  double step_time = 0;
  LoweredStep::OffloadBytes one_bytes;  // of micro-step 0 alone, when extended
  const bool extended = G >= kExtendedAccumulationFrom && context.modes().extend_accumulation;
  if (extended) {
    // Micro-steps 1..G-1 are alike: run one and two, extend (sim/step/accumulation.hpp).
    setup.grad_accum = 1;
    const StepTiming one = step_timing(sc, setup, r, context);
    one_bytes = one.offload_bytes;
    setup.grad_accum = 2;
    step = final_timing();
    step_time = extend_accumulation(one.makespan_s, step.makespan_s, G);
    result.breakdown = extend_accumulation(one.breakdown, step.breakdown, G);
    result.comm = extend_accumulation(one.comm, step.comm, G);
    result.engine_events = one.events + step.events;  // the work done
  } else {
    step = final_timing();
    step_time = step.makespan_s;
    result.breakdown = step.breakdown;
    result.comm = std::move(step.comm);
    result.engine_events = step.events;
  }
  const std::shared_ptr<const LoweredStep> low =
      traced ? traced->low : context.lowering().get(setup, *r.topo, r.prof);
  add_throughput(result, r, *low, step_time);
  MemoryEstimate mem = memory_of(r, *low, context.modules());
  if (r.setup.strategy.offloads()) {
    result.has_offload = true;
    result.offload = offload_result(r, *low);
    if (extended) {  // bytes of G micro-steps from those of 1 and 2
      const LoweredStep::OffloadBytes& b1 = one_bytes;
      OffloadResult& o = result.offload;
      o.h2d_bytes_per_gpu = extend_accumulation(b1.h2d, o.h2d_bytes_per_gpu, G);
      o.d2h_bytes_per_gpu = extend_accumulation(b1.d2h, o.d2h_bytes_per_gpu, G);
      o.nvme_read_bytes_per_gpu = extend_accumulation(b1.nvme_read, o.nvme_read_bytes_per_gpu, G);
      o.nvme_write_bytes_per_gpu =
          extend_accumulation(b1.nvme_write, o.nvme_write_bytes_per_gpu, G);
    }
  }
  result.warnings = warnings_of(sc, r, *low, mem);
  result.warnings.insert(result.warnings.end(), configured.warnings.begin(),
                         configured.warnings.end());
  result.scenario = echo_of(sc, r, context.modules().total_params(r.setup.model),
                            context.modules().active_params(r.setup.model));
  if (r.setup.strategy.family() != StrategyFamily::Fsdp)
    result.scenario.prefetch_depth = low->prefetch_runs;
  result.memory = std::move(mem);
  if (!trace_path.empty())
    write_chrome_trace(
        trace_path, low->program, traced->run, to_json(result),
        extended ? fmt::format("micro-steps 0 and 1 and the optimizer are drawn; micro-steps "
                               "2..{} repeat micro-step 1 exactly (every stream is drained at "
                               "the end of each backward)",
                               G - 1)
                 : "");
  return result;
}

}  // namespace zerosim
