// simulate(): resolve a Scenario (cluster, profile, model, strategy, batch), validate it, lower it
// to a StepProgram, run it on the chosen network tier and assemble the result JSON (keys in
// DESIGN.md).
#include "sim/step/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/memory/memory.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/network_model.hpp"
#include "sim/step/breakdown.hpp"
#include "sim/step/lower.hpp"
#include "sim/step/lowering_cache.hpp"
#include "sim/step/trace.hpp"

namespace zerosim {

namespace {

// Names of CommPhase values, in its order.
constexpr const char* kPhases[] = {"backward_all_gather", "forward_all_gather",
                                   "gradient_reduction"};

// Adds a key to a JSON object: one map node, where an initializer list builds a two-element array
// per key first and then moves it into the map. Keys are sorted by the map either way, so the text
// is the same.
template <class V>
void put(json& object, const char* key, V&& value) {
  object.emplace(key, std::forward<V>(value));
}

struct Bytes {
  double inter = 0, intra = 0;
};

// Payload bytes of one collective by tier, from the shared per-byte plan of its shape (no per-rank
// flows: qgZ's 32768-GPU inter-node all-to-all would be 134M of them). The step repeats a few
// shapes (kind, algorithm, group list) many times: their per-byte figures are kept in a short list
// found by the group list's address (a lowered step shares a handful of lists), and an op's bytes
// are per-byte figures x op.bytes, as FabricPlans::stats computes them. comm_json asks once per
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

// Sums of one "by_collective" / "by_phase" entry, added stream by stream in op order.
struct CommSum {
  double inter = 0, intra = 0, busy = 0;
  int count = 0;
  void add(const Bytes& b, double seconds) {
    inter += b.inter;
    intra += b.intra;
    ++count;
    busy += seconds;
  }
  json to_json() const {
    json j = json::object();
    put(j, "inter_node_bytes", inter);
    put(j, "intra_node_bytes", intra);
    put(j, "count", count);
    put(j, "busy_s", busy);
    return j;
  }
};

json comm_json(const LoweredStep& low, const RunResult& run, const Topology& topo,
               const CostProfile& prof, std::shared_ptr<FabricPlans> plans) {
  ByteCounter count(topo, prof, std::move(plans));
  constexpr int kKinds = static_cast<int>(CollKind::SendRecv) + 1;
  CommSum by_kind[kKinds], by_phase[std::size(kPhases)];
  // Bytes per collective class, read in place below (a copy returned through the stack was
  // reloaded at once as one vector, a stall per op).
  const StepProgram& p = low.program;
  const CollectiveClasses classes(p);
  std::vector<Bytes> class_bytes;
  class_bytes.reserve(classes.first().size());
  for (const int f : classes.first())
    class_bytes.push_back(f >= 0 ? count(p.collectives[static_cast<std::size_t>(f)]) : Bytes{});
  for (std::size_t s = 0; s < low.collective_slots.size(); ++s)
    for (const LoweredStep::CollectiveSlot& slot : low.collective_slots[s]) {
      const OpTiming& t = run.lanes[s][static_cast<std::size_t>(slot.timed)];
      const auto k = static_cast<std::size_t>(slot.collective);
      const Bytes& b = class_bytes[classes.of(k)];
      by_kind[static_cast<int>(p.collectives[k].kind)].add(b, t.end - t.start);
      by_phase[static_cast<int>(low.collective_phase[k])].add(b, t.end - t.start);
    }
  json kinds = json::object(), phases = json::object();
  for (int k = 0; k < kKinds; ++k)
    if (by_kind[k].count > 0) put(kinds, to_string(static_cast<CollKind>(k)), by_kind[k].to_json());
  for (std::size_t ph = 0; ph < std::size(kPhases); ++ph)
    if (by_phase[ph].count > 0) put(phases, kPhases[ph], by_phase[ph].to_json());
  json j = json::object();
  put(j, "inter_node_bytes", run.net.inter_node_bytes);
  put(j, "intra_node_bytes", run.net.intra_node_bytes);
  put(j, "by_collective", std::move(kinds));
  put(j, "by_phase", std::move(phases));
  put(j, "collectives", low.program.collectives.size());
  put(j, "flows", run.net.flows);
  return j;
}

}  // namespace

json simulate(const Scenario& sc, const std::string& trace_path) {
  ClusterOverrides ov{sc.nodes, sc.nics_per_node, sc.nic_gbps, sc.fabric, sc.oversubscription};
  const std::shared_ptr<const Topology> topo_ptr = shared_cluster(sc.cluster, ov);
  const Topology& topo = *topo_ptr;
  const std::shared_ptr<const CostProfile> prof_ptr =
      shared_select_cost_profile(sc.profile, topo.gpu_model());
  const CostProfile& prof = *prof_ptr;

  StepSetup setup;
  setup.model = load_model(sc.model);
  setup.strategy =
      sc.deepspeed.empty() ? parse_strategy(sc.strategy) : load_deepspeed(sc.deepspeed);
  Strategy& st = setup.strategy;
  const int W = topo.gpu_count(), N = topo.gpus_per_node();
  // What a config left "auto", filled as Hugging Face's Trainer does; said in the warnings.
  const std::vector<std::string> filled =
      resolve_auto(st, setup.model.hidden, prof.nccl.arch != GpuArch::Volta);
  const std::string hpz_where =
      sc.deepspeed.empty() ? "--hpz-size" : "/zero_optimization/zero_hpz_partition_size";
  const std::string hpz_file = sc.deepspeed.empty() ? "<command line>" : sc.deepspeed;
  if (sc.hpz_partition > 0) {
    if (!st.hpz)
      throw flag_error("--hpz-size", "needs hpZ in the strategy (e.g. zero3+hpz or zeropp)");
    st.hpz_size = sc.hpz_partition;
  }
  if (st.hpz) {
    if (st.hpz_size == 0) st.hpz_size = N;
    if (W % st.hpz_size != 0)
      throw InputError(
          hpz_file, hpz_where,
          fmt::format("hpZ group size {} must divide the world size {} ({} nodes x {} GPUs)",
                      st.hpz_size, W, topo.node_count(), N));
    if (N % st.hpz_size != 0 && st.hpz_size % N != 0)
      throw InputError(
          hpz_file, hpz_where,
          fmt::format("hpZ group size {} must divide, or be a multiple of, the {} GPUs per "
                      "node (ranks are node-contiguous)",
                      st.hpz_size, N));
  }
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

  setup.seq = sc.seq_len > 0 ? sc.seq_len : setup.model.seq;
  if (sc.seq_len < 0) throw flag_error("--seq-len", "must be positive");
  if (st.micro_batch_sequences > 0) {
    setup.tokens = std::int64_t{st.micro_batch_sequences} * setup.seq;
  } else {
    if (sc.tokens_per_gpu <= 0) throw flag_error("--tokens-per-gpu", "must be positive");
    if (sc.tokens_per_gpu % setup.seq != 0)
      throw flag_error(
          "--tokens-per-gpu",
          fmt::format("{} tokens per GPU is not a multiple of the sequence length {} (a "
                      "micro-batch holds whole sequences)",
                      sc.tokens_per_gpu, setup.seq));
    setup.tokens = sc.tokens_per_gpu;
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
  setup.checkpointing = sc.activation_checkpointing;
  setup.labels = !trace_path.empty();  // op names are read by the trace only
  // Modules are a layer's four submodules; prefetch depth counts modules of the mean size.
  setup.prefetch_depth = prefetch_depth(st, layer_param_count(setup.model) / 4);

  const std::shared_ptr<const LoweredStep> low_ptr = shared_lowered_step(setup, topo, prof_ptr);
  const LoweredStep& low = *low_ptr;
  Engine engine;
  // One lookup of the fabric's shared plans (O(links)) for the network and the byte counts.
  std::shared_ptr<FabricPlans> plans = fabric_plans(topo_ptr, prof);
  auto net = make_network_model(sc.tier, engine, topo, prof, plans);
  net->expect_ops(low.program.collectives);
  RunResult run = run_program(low.program, engine, *net);
  const double step = run.makespan_s;

  MemoryInputs mi;
  mi.model = &setup.model;
  mi.strategy = &st;
  mi.world = W;
  mi.gpus_per_node = N;
  mi.tokens = setup.tokens;
  mi.seq = setup.seq;
  mi.checkpointing = setup.checkpointing;
  mi.prefetch_depth = setup.prefetch_depth;
  mi.capacity_bytes = static_cast<double>(prof.memory_bytes);
  mi.reserved_bytes = prof.memory_reserved_bytes;
  mi.buckets = &low.buckets;
  MemoryEstimate mem = estimate_memory(mi);

  json warnings = json::array();
  if (!mem.fits) warnings.push_back("memory: " + mem.warning);
  for (const auto& f : filled) warnings.push_back("DeepSpeed config: " + f);
  // What the config decides instead of the command line (never silently).
  if (!sc.deepspeed.empty()) {
    std::string from = "the strategy";
    if (st.micro_batch_sequences > 0)
      from +=
          fmt::format(", the micro-batch (train_micro_batch_size_per_gpu {} = {} tokens per GPU)",
                      st.micro_batch_sequences, setup.tokens);
    if (st.grad_accum > 0)
      from += fmt::format(", the accumulation (gradient_accumulation_steps {})", st.grad_accum);
    warnings.push_back("DeepSpeed config: " + from + " come from " + sc.deepspeed +
                       ", not from --strategy/--tokens-per-gpu/--grad-accum");
  }
  if (st.qgz && !low.qgz_active)
    warnings.push_back(
        "qgZ falls back to the FP16 reduce-scatter on a single node (no inter-node hop)");

  const double sequences =
      static_cast<double>(W) * (static_cast<double>(setup.tokens) / setup.seq) * setup.grad_accum;
  const double flops = megatron_step_flops(setup.model, sequences, setup.seq, setup.checkpointing);
  // FLOPs the GPUs actually execute (counted per GEMM and attention matmul, recompute included):
  // the Megatron formula assumes GPT shapes, so this is the number to read for GQA / gated-MLP
  // models.
  double counted = 0;
  for (const auto& m : *low.modules)
    counted += m.forward_flops() * (m.recomputed && setup.checkpointing ? 4 : 3);
  counted *= static_cast<double>(W) * setup.grad_accum;
  StepBreakdown bd = compute_breakdown(low.program, run);
  auto busy = [&](const char* k) { return bd.busy_s.count(k) ? bd.busy_s.at(k) : 0.0; };
  json exposed = json::object();
  for (const char* k : {"all_gather", "reduce_scatter", "all_to_all", "all_reduce"})
    put(exposed, k, bd.exposed_comm_s.count(k) ? bd.exposed_comm_s.at(k) : 0.0);
  put(exposed, "total", bd.exposed_comm_total_s);

  const std::int64_t params = total_param_count(setup.model);  // memoized modules: no rebuild
  json profile = json::object();
  put(profile, "name", prof.name);
  put(profile, "status", prof.status);
  json scenario = json::object();
  put(scenario, "cluster", sc.cluster);
  put(scenario, "node_type", topo.node_type());
  put(scenario, "gpu_model", topo.gpu_model());
  put(scenario, "nodes", topo.node_count());
  put(scenario, "gpus_per_node", N);
  put(scenario, "world_size", W);
  put(scenario, "nics_per_node", topo.nics_per_node());
  put(scenario, "nic_gbps", topo.nic_Bps() / kGbpsToBps);
  put(scenario, "fabric", topo.fabric());
  put(scenario, "oversubscription", topo.oversubscription());
  put(scenario, "model", to_json(setup.model));
  put(scenario, "params", params);
  put(scenario, "strategy", to_json(st));
  put(scenario, "tokens_per_gpu", setup.tokens);
  put(scenario, "seq_len", setup.seq);
  put(scenario, "micro_batch_sequences", setup.tokens / setup.seq);
  put(scenario, "grad_accum", setup.grad_accum);
  put(scenario, "activation_checkpointing", setup.checkpointing);
  put(scenario, "prefetch_depth", setup.prefetch_depth);
  put(scenario, "profile", std::move(profile));
  put(scenario, "tier", sc.tier);
  json breakdown = json::object();
  put(breakdown, "compute_s", busy("compute"));
  put(breakdown, "recompute_s", busy("recompute"));
  put(breakdown, "optimizer_s", busy("optimizer"));
  put(breakdown, "param_fetch_s", busy("param_fetch"));
  put(breakdown, "quant_kernels_s", busy("quant_kernel"));
  put(breakdown, "other_kernels_s", busy("other"));
  put(breakdown, "exposed_comm_s", std::move(exposed));
  put(breakdown, "exposed_kernels_s", bd.exposed_kernels_s);
  put(breakdown, "idle_s", bd.compute_idle_s);
  json engine_stats = json::object();
  put(engine_stats, "events", run.events);
  json result = json::object();
  put(result, "schema_version", kResultSchemaVersion);
  put(result, "scenario", std::move(scenario));
  put(result, "step_time_s", step);
  put(result, "tflops_per_gpu", flops / (W * step) / 1e12);
  put(result, "tokens_per_s",
      static_cast<double>(W) * static_cast<double>(setup.tokens) * setup.grad_accum / step);
  put(result, "model_flops_per_step", flops);
  put(result, "counted_flops_per_step", counted);
  put(result, "counted_tflops_per_gpu", counted / (W * step) / 1e12);
  put(result, "breakdown", std::move(breakdown));
  put(result, "comm", comm_json(low, run, topo, prof, plans));
  put(result, "memory", to_json(mem));
  put(result, "warnings", std::move(warnings));
  put(result, "engine", std::move(engine_stats));
  if (!trace_path.empty()) write_chrome_trace(trace_path, low.program, run, result);
  return result;
}

}  // namespace zerosim
