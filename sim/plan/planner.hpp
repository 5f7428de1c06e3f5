// The planner: for a cluster, a model and (optionally) a global batch, enumerate strategies (ZeRO-3
// and every ZeRO++ subset, hpZ group sizes, quantization bits), micro-batches, gradient
// accumulation and activation checkpointing on and off; simulate all of them on the cheap analytic
// tier, drop what does not fit in GPU memory, confirm on the flow tier the best and every candidate
// within the decision rule's tie threshold of the fastest, and rank by throughput (tokens/s; at a
// fixed global batch, step-time order), each on its most exact number (flow where confirmed). The
// recommendation is the one decision rule of sim/result/recommendation.hpp over the confirmed
// candidates: `report` on the plan's document and --emit-deepspeed make the same decision.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/runner.hpp"

namespace zerosim::plan {

struct PlanRequest {
  Scenario base;  // cluster, network, model, profile, seq_len; strategy/batch are searched
  long long global_batch = 0;  // sequences per optimizer step over all GPUs; 0: free (grad-accum 1)
  std::vector<int> micro_batches = {1, 2, 4, 8, 16, 32};  // sequences per GPU per micro-step
  std::vector<int> qwz_bits = {
      8};  // INT4 weights are not searched by default (convergence unmodelled)
  std::vector<int> qgz_bits = {4};  // simulate() models qgZ with INT4 gradients (the paper)
  // Activation checkpointing: off saves the recompute (about a third of the layers' compute) and
  // costs every layer's activations; both are searched.
  std::vector<bool> checkpointing = {true, false};
  int confirm_top = 8;  // candidates re-simulated on the flow tier (and all within kTieFraction of
                        // the fastest; 0: none)
  int threads = 0;
};

// The shape of the cluster the search needs (from the topology).
struct ClusterShape {
  int nodes = 1;
  int gpus_per_node = 1;
  int seq_len = 0;  // the model's (or the request's) sequence length
};

struct Candidate {
  Scenario scenario;
  int micro_batch = 0;     // sequences per GPU per micro-step
  bool confirmed = false;  // result is from the flow tier
  StepResult result;       // flow result if confirmed, else analytic
  double tokens_per_s() const { return result.tokens_per_s; }
  double step_time_s() const { return result.step_time_s; }
  double peak_bytes() const { return result.memory.peak_bytes; }
  int techniques = 0;  // number of ZeRO++ components on (tie-break: simpler first)
};

struct PlanResult {
  std::vector<Candidate> ranked;  // feasible candidates, best first (throughput)
  std::vector<std::size_t>
      pareto;  // indices into ranked: memory/throughput front, memory ascending
  std::size_t enumerated = 0, infeasible = 0;
  std::vector<std::string> notes;    // search-space decisions worth telling the user
  std::optional<Candidate> closest;  // of those that do not fit, the one needing least memory
  // Indices into ranked: the recommended configuration, and the recommended DeepSpeed one (what
  // --emit-deepspeed writes; differs when the recommendation is PyTorch FSDP). Empty: none.
  std::optional<std::size_t> recommended, recommended_deepspeed;
};

// The decision rule (recommendation.hpp) over the candidates it compares (DeepSpeed strategies
// only when deepspeed_only): the confirmed ones (the flow tier), or all when none was confirmed.
std::optional<std::size_t> recommend(const std::vector<Candidate>& ranked, bool deepspeed_only);

// Enumerates the scenarios of the search space (deterministic order). Throws InputError when the
// global batch admits no micro-batch / accumulation split.
std::vector<Candidate> enumerate_candidates(const PlanRequest& request, const ClusterShape& shape,
                                            std::vector<std::string>* notes = nullptr);

// Which candidates no node count can fit (unfit_refusal in production: simulate() refuses those),
// judged before any is run.
using UnfitScreen = std::function<std::optional<UnfitRefusal>(const Scenario&, SimContext&)>;
UnfitScreen unfit_screen();

// Runs the search with `runner` (simulate_runner() in production): the candidates `screen` refuses
// are counted as not fitting and not run; when it refuses every candidate, throws the refusal of
// the one needing the least memory, before any cluster is built.
PlanResult run_plan(const PlanRequest& request, const ClusterShape& shape,
                    const sweep::ScenarioRunner& runner,
                    const UnfitScreen& screen = unfit_screen());

// "ZeRO++ (hpZ 16, qwZ INT8, qgZ INT4)" style description of a candidate.
std::string describe(const Candidate& c);
// Why the winner beats the runner-up: step time and each breakdown component, largest differences
// first.
std::string explain_winner(const Candidate& winner, const Candidate& runner_up);
// The DeepSpeed config that runs the candidate.
ordered_json deepspeed_config(const Candidate& c, const ClusterShape& shape);
// The plan as a JSON document {schema_version, kind: "plan", candidates: [...], pareto: [...]}.
json plan_document(const PlanResult& plan);
// The human-readable plan (top `top` configurations, winner explanation, Pareto front).
std::string render_plan(const PlanResult& plan, std::size_t top);

}  // namespace zerosim::plan
