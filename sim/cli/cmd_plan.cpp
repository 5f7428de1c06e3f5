// `zerosim plan --cluster ... --model ... [--global-batch B]`: ranked feasible configurations, why
// the winner wins, the memory/throughput Pareto front, and the DeepSpeed config of the winner.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "sim/cli/cluster_flags.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/validators.hpp"
#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/no_fit_advice.hpp"
#include "sim/plan/planner.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "sim/workload/model.hpp"

namespace zerosim::cli {

namespace {

namespace fs = std::filesystem;

struct PlanArgs {
  ClusterFlags cluster;
  std::string model, profile, micro_batches = "1,2,4,8,16,32", qwz_bits = "8", qgz_bits = "4";
  std::string checkpointing = "true,false";
  AttentionChoice attention = Scenario{}.attention;
  std::string sm_share = Scenario{}.sm_share ? "true" : "false";
  std::string out, deepspeed_out;
  bool json = false;
  int seq_len = 0, confirm = 8, threads = 0;
  std::size_t top = 10;
  long long global_batch = 0;
};

std::vector<int> int_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : sweep::split_list(text, flag)) {
    Scenario probe;  // reuse the sweep's integer validation, under this flag's name
    try {
      sweep::apply_flag(probe, "--grad-accum", item);
    } catch (const InputError& e) {
      throw flag_error(flag, e.rule());
    }
    out.push_back(probe.grad_accum);
  }
  return out;
}

// --activation-checkpointing true,false: each item by the scenario schema's rule.
std::vector<bool> checkpointing_list(const std::string& text) {
  const std::string flag = "--activation-checkpointing";
  std::vector<bool> out;
  for (const auto& item : sweep::split_list(text, flag)) {
    Scenario probe;
    sweep::apply_flag(probe, flag, item);
    if (std::find(out.begin(), out.end(), probe.activation_checkpointing) == out.end())
      out.push_back(probe.activation_checkpointing);
  }
  return out;
}

std::vector<int> bits_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : sweep::split_list(text, flag)) {
    if (item != "4" && item != "8")
      throw flag_error(flag, fmt::format("'{}': the kernels support 4 or 8 bits", item));
    out.push_back(std::stoi(item));
  }
  return out;
}

// No configuration fits: bad input (exit 2) naming what to change, after the plan was printed and
// written.
InputError nothing_fits(const plan::PlanResult& result) {
  if (!result.closest)  // every candidate that failed is a closest one; none means none was run
    return flag_error("--micro-batch", "no configuration was searched");
  const long long nodes = plan::nodes_to_fit(result.closest->result);
  const std::string need =
      fmt::format("no configuration fits in GPU memory (the closest needs {} of {} per GPU)",
                  format_bytes(result.closest->peak_bytes()),
                  format_bytes(result.closest->result.memory.capacity_bytes));
  if (nodes > 0)
    return flag_error("--nodes", fmt::format("{}; {} nodes would fit it", need, nodes));
  return flag_error("--seq-len", need + "; more nodes cannot help, shorter sequences can");
}

void run_plan_command(const PlanArgs& a) {
  check_output_paths({data_input("--cluster", "topologies", a.cluster.cluster),
                      data_input("--model", "workloads", a.model),
                      data_input("--profile", "calibrate/profiles", a.profile)},
                     {{"--out", a.out}, {"--emit-deepspeed", a.deepspeed_out}});
  plan::PlanRequest q;
  q.base.cluster = a.cluster.cluster;
  q.base.nodes = a.cluster.overrides.nodes;
  q.base.nics_per_node = a.cluster.overrides.nics_per_node;
  q.base.nic_gbps = a.cluster.overrides.nic_gbps;
  q.base.fabric = a.cluster.overrides.fabric;
  q.base.oversubscription = a.cluster.overrides.oversubscription;
  q.base.model = a.model;
  q.base.profile = a.profile;
  q.base.attention = a.attention;
  q.base.sm_share = a.sm_share == "true";
  q.global_batch = a.global_batch;
  q.micro_batches = int_list(a.micro_batches, "--micro-batch");
  q.qwz_bits = bits_list(a.qwz_bits, "--qwz-bits");
  q.qgz_bits = bits_list(a.qgz_bits, "--qgz-bits");
  q.checkpointing = checkpointing_list(a.checkpointing);
  q.confirm_top = a.confirm;
  q.threads = a.threads;
  begin_work();
  // A cluster past a plan's limit is refused unbuilt: it runs hundreds of configurations, each a
  // step of that cluster (README, Limits).
  ClusterFlags cluster = a.cluster;
  cluster.overrides.max_gpus = plan_max_gpus();
  cluster.overrides.max_gpus_of = "a plan";
  const ClusterShape cs = shape_from(cluster);  // a builder preset's graph is not built
  plan::ClusterShape shape{cs.nodes, cs.gpus_per_node,
                           a.seq_len > 0 ? a.seq_len : load_model(a.model).seq};
  auto result = plan::run_plan(q, shape, sweep::simulate_runner());
  const json doc = plan::plan_document(result);
  require_finite_result(doc, "the plan");  // what plan writes, report reads
  const std::string document = doc.dump(1) + "\n";
  const std::string text = a.json ? document : plan::render_plan(result, a.top);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!a.out.empty()) write_file_atomic(a.out, document);
  if (result.ranked.empty()) throw nothing_fits(result);
  if (!a.deepspeed_out.empty()) {
    // The recommended configuration's, or when that is PyTorch FSDP (no ds_config) the
    // recommended DeepSpeed one: the same decision rule (plan::recommend).
    if (!result.recommended_deepspeed)
      throw flag_error("--emit-deepspeed", "no DeepSpeed configuration fits; nothing to write");
    const auto& w = result.ranked[*result.recommended_deepspeed];
    const std::size_t rank = *result.recommended_deepspeed + 1;
    if (result.recommended != result.recommended_deepspeed)
      std::fprintf(stderr,
                   "zerosim plan: note: the recommendation (#%zu) is PyTorch FSDP, which has no "
                   "DeepSpeed config; the config written is that of #%zu, the recommended "
                   "DeepSpeed configuration\n",
                   *result.recommended + 1, rank);
    if (w.scenario.quant_bits_weights != 8 || w.scenario.quant_bits_grads != 4)
      std::fprintf(stderr,
                   "zerosim plan: note: the winner uses qwZ INT%d / qgZ INT%d; DeepSpeed's config "
                   "has no key for "
                   "the bit width (it runs INT8 / INT4)\n",
                   w.scenario.quant_bits_weights, w.scenario.quant_bits_grads);
    write_file_atomic(a.deepspeed_out, plan::deepspeed_config(w, shape).dump(2) + "\n");
    // Not a key of DeepSpeed's ZeRO config: the training script turns it on or off.
    std::fprintf(stderr,
                 "zerosim plan: note: #%zu runs with activation checkpointing %s (Hugging Face "
                 "Trainer: --gradient_checkpointing %s)\n",
                 rank, w.scenario.activation_checkpointing ? "on" : "off",
                 w.scenario.activation_checkpointing ? "true" : "false");
    std::fprintf(stderr, "zerosim plan: wrote the DeepSpeed config of #%zu to %s\n", rank,
                 a.deepspeed_out.c_str());
  }
}

}  // namespace

void register_plan(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan", "Search strategies, micro-batch and accumulation; rank what fits by throughput");
  add_cluster_flags(cmd, a->cluster);
  add_scenario_option(cmd, scenario_param("--model"), a->model);
  add_scenario_option(cmd, scenario_param("--profile"), a->profile);
  add_scenario_option(cmd, scenario_param("--seq-len"), a->seq_len);
  add_scenario_option(cmd, scenario_param("--attention"), a->attention);
  add_scenario_option(cmd, scenario_param("--sm-share"), a->sm_share);
  cmd->add_option("--activation-checkpointing", a->checkpointing,
                  "activation checkpointing settings to search (default: true,false)");
  cmd->add_option("--global-batch", a->global_batch,
                  "sequences per optimizer step over all GPUs (default: free, no accumulation)")
      ->check(int_range(1, 1LL << 40));
  cmd->add_option("--micro-batch,--micro-batches", a->micro_batches,
                  "micro-batch sizes (sequences per GPU per micro-step) to search, a "
                  "comma-separated list (default 1,2,4,8,16,32)");
  cmd->add_option("--qwz-bits", a->qwz_bits, "qwZ weight bits to search (4,8; default 8)");
  cmd->add_option("--qgz-bits", a->qgz_bits, "qgZ gradient bits to search (default 4)");
  cmd->add_option(
         "--confirm", a->confirm,
         "candidates re-simulated on the flow tier (default 8), beside every one within 2% of the "
         "fastest (0: none)")
      ->check(int_range(0, 10000));
  cmd->add_option("--top", a->top, "configurations printed (default 10)")
      ->check(int_range(1, 100000));
  cmd->add_option("--threads", a->threads, "worker threads (default: all cores)")
      ->check(int_range(0, 4096));
  cmd->add_option("--out", a->out,
                  "write the ranked plan as JSON (atomic; readable by `zerosim report`)");
  cmd->add_flag("--json", a->json, "print the ranked plan as JSON instead of the table");
  cmd->add_option("--emit-deepspeed", a->deepspeed_out, "write the winner's DeepSpeed config here");
  cmd->callback([a] { run_plan_command(*a); });
}

}  // namespace zerosim::cli
