// zerosim simulate: one training step of one scenario. Human summary by default; --json prints the
// result object; --memory the memory view (memory_view.hpp); --out writes it (atomically); --trace
// writes a Chrome trace. A configuration that does not fit in GPU memory is bad input (exit 2):
// refused by simulate() before anything is built when no node count can make it fit, else once its
// result is printed and written.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/cli/memory_view.hpp"
#include "sim/cli/validators.hpp"
#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/no_fit_advice.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/step/simulate.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim::cli {

namespace {

struct SimulateFlags {
  std::map<std::string, std::string> values;  // flag -> text, one per scenario schema entry
  std::map<std::string, CLI::Option*> options;
  std::string trace, out;
  bool json = false, no_checkpointing = false, memory = false;
};

// The scenario: cluster, batch, model.
void print_scenario(const ScenarioEcho& sc) {
  fmt::print(
      "{} on {} x {} {} ({} GPUs, {} x {} Gbps NICs per node), micro-batch {} x seq {} = {} "
      "tokens/GPU x {} micro-steps\n",
      sc.strategy.name(), sc.nodes, sc.gpus_per_node, sc.gpu_model, sc.world_size, sc.nics_per_node,
      sc.nic_gbps, sc.micro_batch_sequences, sc.seq_len, sc.tokens_per_gpu, sc.grad_accum);
  const std::string active =
      sc.model.moe() ? fmt::format(", {:.2f}B active per token",
                                   static_cast<double>(active_param_count(sc.model)) / 1e9)
                     : "";
  fmt::print(
      "  model {} ({:.2f}B params{}), {} attention, activation "
      "checkpointing {}\n",
      sc.model.name, static_cast<double>(sc.params) / 1e9, active, sc.attention,
      sc.activation_checkpointing ? "on" : "off");
  // A Hugging Face config's default length is a rule of its own: said, with the flag to change it.
  if (sc.seq_len_source != "--seq-len" && !sc.model.seq_source.empty())
    fmt::print("  sequence length {}: {}; --seq-len sets another\n", sc.seq_len, sc.seq_len_source);
}

// The DeepSpeed settings the step ran with, and where they came from: without --deepspeed they
// are DeepSpeed's own defaults. Stages 1 and 2 gather the updated parameters in buckets; HSDP
// names its shard group.
void print_strategy(const Strategy& st) {
  if (st.family() == StrategyFamily::Fsdp) {
    const FsdpOptions& f = st.fsdp;
    fmt::print(
        "  PyTorch FSDP: {}{}, backward_prefetch {}, forward_prefetch {}, limit_all_gathers {}, "
        "param_dtype {}-byte, reduce_dtype {}-byte, one unit per transformer block\n",
        to_string(f.sharding),
        st.hybrid() ? fmt::format(" (sharded within groups of {} GPUs)", st.shard_size) : "",
        to_string(f.backward_prefetch), f.forward_prefetch, f.limit_all_gathers, f.param_bytes,
        st.grad_comm_bytes);
    return;
  }
  if (st.stage < 3)
    fmt::print("  ZeRO stage {}: allgather_bucket_size {:g}\n", st.stage,
               static_cast<double>(st.allgather_bucket_elems));
  if (st.hsdp)
    fmt::print(
        "  HSDP: ZeRO-3 within groups of {} GPUs, replicated across "
        "the groups (mics_shard_size {})\n",
        st.shard_size, st.shard_size);
  fmt::print(
      "  DeepSpeed {}: reduce_bucket_size {:g}, stage3_prefetch_bucket_size {:g}, "
      "stage3_max_live_parameters {:g}, overlap_comm {} ({})\n",
      to_string(st.deepspeed_version), static_cast<double>(st.reduce_bucket_elems),
      static_cast<double>(st.prefetch_bucket_elems), static_cast<double>(st.max_live_params),
      st.overlap_comm, st.source == "--strategy" ? "DeepSpeed's defaults" : "from " + st.source);
  // The release's rules that ran, for the techniques that are on.
  if (st.hpz)
    fmt::print("  hpZ rule ({}): {}\n", to_string(hpz_rule(st.deepspeed_version)),
               describe(hpz_rule(st.deepspeed_version)));
  if (st.qgz) fmt::print("  qgZ rule: {}\n", describe_qgz_fallback(st.deepspeed_version));
}

// The step time and the rates derived from it.
void print_rates(const StepResult& r) {
  std::printf("  step time     %s\n", format_time(r.step_time_s).c_str());
  std::printf("  TFLOPs/GPU    %.1f (Megatron-LM formula)\n", r.tflops_per_gpu);
  std::printf(
      "  MFU           %.1f%% (model FLOPs of the architecture, no recompute; peak %.0f "
      "TFLOPs)\n",
      100 * r.mfu, r.peak_tflops_per_gpu);
  std::printf("  HFU           %.1f%% (FLOPs executed, recompute included: %.1f TFLOPs/GPU)\n",
              100 * r.hfu, r.counted_tflops_per_gpu);
  std::printf("  tokens/s      %.0f\n", r.tokens_per_s);
}

// Where the time goes, the bytes moved and the memory per GPU.
void print_breakdown(const StepResult& r) {
  const StepTimeBreakdown& b = r.breakdown;
  std::printf("  compute %s, recompute %s, optimizer %s, parameter fetch %s, quant kernels %s\n",
              format_time(b.compute_s).c_str(), format_time(b.recompute_s).c_str(),
              format_time(b.optimizer_s).c_str(), format_time(b.param_fetch_s).c_str(),
              format_time(b.quant_kernels_s).c_str());
  // Compute and recompute by kernel class (memory-bound classes with no bytes are left out).
  const ComputeTerms& k = b.compute_kernels;
  std::string kernels =
      "gemm " + format_time(k.gemm_s) + ", attention " + format_time(k.attention_s);
  for (int c = 0; c < kMemoryKernelCount; ++c)
    if (k.memory_s[static_cast<std::size_t>(c)] > 0)
      kernels += std::string(", ") + to_string(static_cast<MemoryKernel>(c)) + " " +
                 format_time(k.memory_s[static_cast<std::size_t>(c)]);
  kernels += ", launch " + format_time(k.launch_s);
  std::printf("  compute by kernel: %s\n", kernels.c_str());
  const ExposedComm& e = b.exposed_comm;
  std::printf(
      "  exposed communication: all_gather %s, all_reduce %s, all_to_all %s, "
      "reduce_scatter %s, total %s\n",
      format_time(e.all_gather_s).c_str(), format_time(e.all_reduce_s).c_str(),
      format_time(e.all_to_all_s).c_str(), format_time(e.reduce_scatter_s).c_str(),
      format_time(e.total_s).c_str());
  std::printf("  bytes per step: inter-node %s, intra-node %s\n",
              format_bytes(r.comm.inter_node_bytes).c_str(),
              format_bytes(r.comm.intra_node_bytes).c_str());
  std::printf("  memory per GPU %s of %s (%s)\n", format_bytes(r.memory.peak_bytes).c_str(),
              format_bytes(r.memory.capacity_bytes).c_str(),
              r.memory.fits ? "fits" : "DOES NOT FIT");
}

// ZeRO-Offload's times and bytes.
void print_offload(const StepResult& r) {
  const Strategy& st = r.scenario.strategy;
  const StepTimeBreakdown& b = r.breakdown;
  const OffloadResult& o = r.offload;
  fmt::print(
      "  offload (optimizer {}, parameters {}): PCIe copies {}, NVMe {}, "
      "CPU Adam {}, exposed {}\n",
      to_string(st.offload_optimizer), to_string(st.offload_param), format_time(b.offload_copy_s),
      format_time(b.nvme_io_s), format_time(b.host_optimizer_s), format_time(b.exposed_offload_s));
  fmt::print(
      "  offload per GPU per step: host->GPU {}, GPU->host {}, NVMe read {}, "
      "write {}; host memory per node {} of {}\n",
      format_bytes(o.h2d_bytes_per_gpu), format_bytes(o.d2h_bytes_per_gpu),
      format_bytes(o.nvme_read_bytes_per_gpu), format_bytes(o.nvme_write_bytes_per_gpu),
      format_bytes(o.host_bytes_per_node), format_bytes(o.host_capacity_bytes_per_node));
}

// The console reporter of a StepResult.
void print_summary(const StepResult& r) {
  print_scenario(r.scenario);
  print_strategy(r.scenario.strategy);
  print_rates(r);
  print_breakdown(r);
  if (r.has_offload) print_offload(r);
  for (const auto& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
}

// The scenario does not fit in GPU memory: the error names the flag that can fix it (more nodes
// when the sharded model states are what overflows; a strategy that shards more under ZeRO-1/2 or
// HSDP; else a smaller micro-batch, or shorter sequences at one sequence per micro-step).
InputError does_not_fit(const StepResult& r) {
  const std::string need = fmt::format(
      "the configuration does not fit in GPU memory: it needs {} per GPU, the GPU has {}",
      format_bytes(r.memory.peak_bytes), format_bytes(r.memory.capacity_bytes));
  if (const long long nodes = plan::nodes_to_fit(r); nodes > 0)
    return flag_error("--nodes", fmt::format("{}; {} nodes would fit it", need, nodes));
  if (plan::zero3_shards_more(r.scenario.strategy))
    return flag_error("--strategy", need + "; more nodes cannot help, ZeRO-3 shards more");
  if (r.scenario.micro_batch_sequences > 1)
    return flag_error("--micro-batch",
                      need + "; more nodes cannot help, a smaller micro-batch can");
  return flag_error("--seq-len", need + "; more nodes cannot help, shorter sequences can");
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand("simulate", "simulate one ZeRO-3 / ZeRO++ training step");
  // Every scenario parameter, from the scenario schema (the same rules as `sweep`'s lists).
  for (const auto& p : scenario_params()) {
    flags->options[p.flag] = add_scenario_option(cmd, p, flags->values[p.flag]);
  }
  cmd->add_flag("--no-checkpointing", flags->no_checkpointing,
                "disable activation checkpointing (--activation-checkpointing false)")
      ->excludes(flags->options.at("--activation-checkpointing"));
  cmd->add_option("--trace", flags->trace, "write a Chrome trace of the step here");
  auto* json_flag = cmd->add_flag("--json", flags->json, "print the result JSON");
  cmd->add_flag("--memory", flags->memory,
                "print the memory per GPU by component beside DeepSpeed's ZeRO-3 estimator "
                "(estimate_zero3_model_states_mem_needs_all_live) for the same model and "
                "cluster, term by term, instead of the summary")
      ->excludes(json_flag);
  cmd->add_option("--out", flags->out, "write the result JSON here");
  cmd->callback([flags] {
    Scenario sc;
    for (const auto& p : scenario_params())
      if (flags->options.at(p.flag)->count() > 0)
        apply_scenario_param(sc, p, flags->values.at(p.flag));
    if (flags->no_checkpointing) sc.activation_checkpointing = false;
    check_output_paths({data_input("--cluster", "topologies", sc.cluster),
                        data_input("--model", "workloads", sc.model),
                        data_input("--profile", "calibrate/profiles", sc.profile),
                        {"--deepspeed", sc.deepspeed},
                        {"--fsdp-config", sc.fsdp_config}},
                       {{"--out", flags->out}, {"--trace", flags->trace}});
    // One call reads each file once: watching them for a next call would only cost system calls.
    ReferenceModes modes;
    modes.file_watch = false;
    SimContext context(modes);
    begin_work();
    const StepResult r = simulate(sc, context, flags->trace);
    const json doc = to_json(r);
    require_finite_result(doc, "the result");
    if (!flags->out.empty()) write_file_atomic(flags->out, doc.dump(2) + "\n");
    if (flags->json)
      std::printf("%s\n", doc.dump(2).c_str());
    else if (flags->memory)
      std::fputs(memory_view(r).c_str(), stdout);
    else {
      print_summary(r);
      // How far the profile's collective costs can be trusted (its provenance).
      fmt::print("  profile {}: collectives {}\n", r.scenario.profile_name,
                 collectives_trust(select_cost_profile_for_gpu(sc.profile, r.scenario.gpu_model)));
    }
    if (!r.memory.fits) {  // after the result: the planner's ways forward, then the error
      std::fflush(stdout);
      std::fputs(plan::ways_to_fit(r).c_str(), stderr);
      throw does_not_fit(r);
    }
  });
}

}  // namespace zerosim::cli
