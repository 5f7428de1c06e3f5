// zerosim simulate: one training step of one scenario. Human summary by default; --json prints the
// result object; --out writes it (atomically); --trace writes a Chrome trace.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "sim/cli/cluster_flags.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/core/units.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim::cli {

namespace {

struct SimulateFlags {
  ClusterFlags cluster;
  Scenario scenario;
  std::string trace, out;
  bool json = false, no_checkpointing = false;
};

void print_summary(const json& r) {
  const auto& sc = r["scenario"];
  std::printf("%s\n",
              fmt::format("{} on {} x {} {} ({} GPUs, {} x {} Gbps NICs per node), {} tokens/GPU "
                          "x {} micro-steps, seq {}",
                          sc["strategy"]["name"].get<std::string>(), sc["nodes"].get<int>(),
                          sc["gpus_per_node"].get<int>(), sc["gpu_model"].get<std::string>(),
                          sc["world_size"].get<int>(), sc["nics_per_node"].get<int>(),
                          sc["nic_gbps"].get<double>(), sc["tokens_per_gpu"].get<std::int64_t>(),
                          sc["grad_accum"].get<int>(), sc["seq_len"].get<int>())
                  .c_str());
  std::printf("  model %s (%.2fB params)\n", sc["model"]["name"].get<std::string>().c_str(),
              sc["params"].get<double>() / 1e9);
  // The DeepSpeed settings the step ran with, and where they came from: without --deepspeed they
  // are DeepSpeed's own defaults for stage 3.
  const auto& st = sc["strategy"];
  const std::string from = st["source"].get<std::string>();
  std::printf("%s\n",
              fmt::format("  DeepSpeed: reduce_bucket_size {:g}, stage3_prefetch_bucket_size {:g}, "
                          "stage3_max_live_parameters {:g}, overlap_comm {} ({})",
                          st["reduce_bucket_elems"].get<double>(),
                          st["prefetch_bucket_elems"].get<double>(),
                          st["max_live_params"].get<double>(), st["overlap_comm"].get<bool>(),
                          from == "--strategy" ? "DeepSpeed's defaults" : "from " + from)
                  .c_str());
  std::printf("  step time     %s\n", format_time(r["step_time_s"].get<double>()).c_str());
  std::printf("  TFLOPs/GPU    %.1f\n", r["tflops_per_gpu"].get<double>());
  std::printf("  tokens/s      %.0f\n", r["tokens_per_s"].get<double>());
  const auto& b = r["breakdown"];
  std::printf("  compute %s, recompute %s, optimizer %s, parameter fetch %s, quant kernels %s\n",
              format_time(b["compute_s"].get<double>()).c_str(),
              format_time(b["recompute_s"].get<double>()).c_str(),
              format_time(b["optimizer_s"].get<double>()).c_str(),
              format_time(b["param_fetch_s"].get<double>()).c_str(),
              format_time(b["quant_kernels_s"].get<double>()).c_str());
  std::string exposed;
  for (const auto& [k, v] : b["exposed_comm_s"].items())
    exposed += fmt::format("{}{} {}", exposed.empty() ? "" : ", ", k, format_time(v.get<double>()));
  std::printf("  exposed communication: %s\n", exposed.c_str());
  const auto& c = r["comm"];
  std::printf("  bytes per step: inter-node %s, intra-node %s\n",
              format_bytes(c["inter_node_bytes"].get<double>()).c_str(),
              format_bytes(c["intra_node_bytes"].get<double>()).c_str());
  const auto& m = r["memory"];
  std::printf("  memory per GPU %s of %s (%s)\n",
              format_bytes(m["peak_bytes_per_gpu"].get<double>()).c_str(),
              format_bytes(m["capacity_bytes"].get<double>()).c_str(),
              m["fits"].get<bool>() ? "fits" : "DOES NOT FIT");
  for (const auto& w : r["warnings"]) std::printf("  warning: %s\n", w.get<std::string>().c_str());
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand("simulate", "simulate one ZeRO-3 / ZeRO++ training step");
  add_cluster_flags(cmd, flags->cluster);
  Scenario& s = flags->scenario;
  cmd->add_option("--model", s.model, "workload preset, workload file or Hugging Face config.json")
      ->required();
  cmd->add_option("--strategy", s.strategy,
                  "zero3 | zeropp | zero3+qwz | zero3+hpz | zero3+qgz | "
                  "zero3+qwz+hpz | ...");
  cmd->add_option("--deepspeed", s.deepspeed,
                  "DeepSpeed config JSON (replaces --strategy; its micro-batch "
                  "and accumulation replace the flags)");
  cmd->add_option("--tokens-per-gpu", s.tokens_per_gpu, "tokens per GPU per micro-step")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", s.seq_len, "sequence length (default: the model's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--grad-accum", s.grad_accum, "gradient accumulation steps")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--hpz-size", s.hpz_partition,
                  "hpZ secondary partition size k (default: GPUs per node)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--qgz-chunks", s.qgz_chunks,
                  "pipeline qgZ's two hops over this many chunks (1 = off)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-checkpointing", flags->no_checkpointing, "disable activation checkpointing");
  cmd->add_option("--profile", s.profile, "cost profile name or file (default: matches the GPU)");
  cmd->add_option("--tier", s.tier, "network model: flow | analytic");
  cmd->add_option("--trace", flags->trace, "write a Chrome trace of the step here");
  cmd->add_flag("--json", flags->json, "print the result JSON");
  cmd->add_option("--out", flags->out, "write the result JSON here");
  cmd->callback([flags] {
    const Scenario& f = flags->scenario;
    check_output_paths({data_input("--cluster", "topologies", flags->cluster.cluster),
                        data_input("--model", "workloads", f.model),
                        data_input("--profile", "calibrate/profiles", f.profile),
                        {"--deepspeed", f.deepspeed}},
                       {{"--out", flags->out}, {"--trace", flags->trace}});
    Scenario sc = flags->scenario;
    sc.cluster = flags->cluster.cluster;
    sc.nodes = flags->cluster.overrides.nodes;
    sc.nics_per_node = flags->cluster.overrides.nics_per_node;
    sc.nic_gbps = flags->cluster.overrides.nic_gbps;
    sc.fabric = flags->cluster.overrides.fabric;
    sc.oversubscription = flags->cluster.overrides.oversubscription;
    sc.activation_checkpointing = !flags->no_checkpointing;
    json r = simulate(sc, flags->trace);
    require_finite_result(r, "the result");
    if (!flags->out.empty()) write_file_atomic(flags->out, r.dump(2) + "\n");
    if (flags->json)
      std::printf("%s\n", r.dump(2).c_str());
    else
      print_summary(r);
  });
}

}  // namespace zerosim::cli
