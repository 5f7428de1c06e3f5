#include "sim/plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/no_fit_advice.hpp"
#include "sim/result/deepspeed_block.hpp"
#include "sim/result/recommendation.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/step/simulate.hpp"
#include "sim/strategy/strategy_name.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::plan {

namespace {

// The strategy of a candidate (its scenario holds the name the planner wrote).
StrategyId id_of(const Scenario& s) { return parse_strategy_id(s.strategy); }

bool fits(const StepResult& r) { return r.memory.fits; }

const char* checkpointing_word(bool on) { return on ? "on" : "off"; }

// Strict weak order: higher throughput, fewer techniques, less memory; confirmed first among
// equals.
bool better(const Candidate& a, const Candidate& b) {
  double tol = 1e-9 * std::max(a.tokens_per_s(), b.tokens_per_s());
  if (std::fabs(a.tokens_per_s() - b.tokens_per_s()) > tol)
    return a.tokens_per_s() > b.tokens_per_s();
  if (a.techniques != b.techniques) return a.techniques < b.techniques;
  if (a.peak_bytes() != b.peak_bytes()) return a.peak_bytes() < b.peak_bytes();
  return a.confirmed && !b.confirmed;
}

std::vector<StepResult> run_all(const std::vector<Scenario>& scenarios,
                                const sweep::ScenarioRunner& runner, int threads) {
  std::vector<std::size_t> idx(scenarios.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  sweep::RunOptions opt;
  opt.threads = threads;
  auto out = sweep::run_scenarios(scenarios, idx, runner, opt);
  std::vector<StepResult> results;
  results.reserve(out.size());
  for (auto& r : out) results.push_back(std::move(*r));
  return results;
}

// Keeps, of the candidates that do not fit, the one needing the least memory.
void note_closest(PlanResult& plan, const Candidate& c, StepResult result) {
  if (plan.closest && result.memory.peak_bytes >= plan.closest->peak_bytes()) return;
  plan.closest = c;
  plan.closest->result = std::move(result);
}

// The candidates some node count may fit; each of the others (unfit_refusal) is counted in
// plan.infeasible without being simulated. None left: the refusal of the one needing the least,
// with the candidate named.
std::vector<Candidate> screen_unfit(std::vector<Candidate> cands, PlanResult& plan,
                                    const UnfitScreen& screen) {
  SimContext context;
  std::vector<Candidate> kept;
  std::optional<UnfitRefusal> least;
  const Candidate* least_of = nullptr;
  for (Candidate& c : cands) {
    std::optional<UnfitRefusal> no = screen(c.scenario, context);
    if (!no) {
      kept.push_back(std::move(c));
      continue;
    }
    ++plan.infeasible;
    if (!least || no->need_bytes < least->need_bytes) {
      least = std::move(no);
      least_of = &c;
    }
  }
  if (kept.empty() && least) {
    const InputError& e = least->error;
    throw InputError(
        e.file(), e.path(),
        fmt::format("no configuration of the {} searched fits; the closest, {} at "
                    "micro-batch {}: {}",
                    plan.enumerated, describe(*least_of), least_of->micro_batch, e.rule()));
  }
  return kept;
}

}  // namespace

namespace {

// A candidate of micro-batch m, accumulation ga and checkpointing ckpt running `strategy`.
Candidate candidate(const PlanRequest& q, const ClusterShape& shape, int m, int ga, bool ckpt,
                    const std::string& strategy) {
  Candidate c;
  c.scenario = q.base;
  c.scenario.strategy = strategy;
  c.scenario.deepspeed.clear();
  c.scenario.hpz_partition = 0;
  c.scenario.micro_batch = m;
  c.scenario.tokens_per_gpu = 0;
  c.scenario.seq_len = shape.seq_len;
  c.scenario.grad_accum = ga;
  c.scenario.activation_checkpointing = ckpt;
  c.micro_batch = m;
  return c;
}

// ZeRO-3 with every subset of ZeRO++'s techniques, hpZ group sizes and quantization widths.
void add_zero3_candidates(std::vector<Candidate>& out, const PlanRequest& q,
                          const ClusterShape& shape, int m, int ga,
                          const std::vector<int>& hpz_sizes, bool multi_node) {
  for (int mask = 0; mask < 8; ++mask) {
    bool qwz = mask & 1, hpz = mask & 2, qgz = mask & 4;
    if (qgz && !multi_node) continue;
    std::vector<int> ks = hpz ? hpz_sizes : std::vector<int>{0};
    if (hpz && ks.empty()) continue;
    for (int k : ks)
      for (int wb : qwz ? q.qwz_bits : std::vector<int>{8})
        for (int gb : qgz ? q.qgz_bits : std::vector<int>{4})
          for (const bool ckpt : q.checkpointing) {
            Candidate c = candidate(q, shape, m, ga, ckpt,
                                    StrategyId{StrategyKind::Zero3, qwz, hpz, qgz}.name());
            c.scenario.hpz_partition = k;
            c.scenario.quant_bits_weights = wb;
            c.scenario.quant_bits_grads = gb;
            c.techniques = qwz + hpz + qgz;
            out.push_back(std::move(c));
          }
  }
}

// ZeRO stages 1 and 2, HSDP sharded within each node, PyTorch FSDP's FULL_SHARD, SHARD_GRAD_OP
// and HYBRID_SHARD, and FSDP2's fully_shard, with PyTorch's defaults (the hybrid ones on more than
// one node; on one they are ZeRO-3 and FULL_SHARD).
void add_other_candidates(std::vector<Candidate>& out, const PlanRequest& q,
                          const ClusterShape& shape, int m, int ga, bool multi_node) {
  for (const StrategyKind other :
       {StrategyKind::Zero1, StrategyKind::Zero2, StrategyKind::Hsdp, StrategyKind::FsdpFullShard,
        StrategyKind::FsdpShardGradOp, StrategyKind::FsdpHybridShard, StrategyKind::Fsdp2}) {
    if (!multi_node && (other == StrategyKind::Hsdp || other == StrategyKind::FsdpHybridShard))
      continue;
    for (const bool ckpt : q.checkpointing) {
      Candidate c = candidate(q, shape, m, ga, ckpt, StrategyId{other}.name());
      c.scenario.hsdp_size = 0;
      out.push_back(std::move(c));
    }
  }
}

// The notes on what the search leaves out, and the hpZ group sizes it tries.
std::vector<int> search_scope(const PlanRequest& q, const ClusterShape& shape, long long world,
                              std::vector<std::string>* notes) {
  std::vector<int> hpz_sizes;
  for (int k = 2; k <= shape.gpus_per_node; ++k)
    if (shape.gpus_per_node % k == 0 && world % k == 0) hpz_sizes.push_back(k);
  if (shape.nodes <= 1 && notes)
    notes->push_back(
        "qgZ not searched: it only applies on more than one node (on one node DeepSpeed falls "
        "back to a reduce-scatter)");
  if (notes && q.qwz_bits == std::vector<int>{8})
    notes->push_back(
        "qwZ searched with INT8 weights only (the paper's setting; INT4 weights: --qwz-bits 4,8)");
  return hpz_sizes;
}

}  // namespace

std::vector<Candidate> enumerate_candidates(const PlanRequest& q, const ClusterShape& shape,
                                            std::vector<std::string>* notes) {
  const long long world = static_cast<long long>(shape.nodes) * shape.gpus_per_node;
  if (q.micro_batches.empty()) throw flag_error("--micro-batch", "empty list");
  if (q.checkpointing.empty()) throw flag_error("--activation-checkpointing", "empty list");
  if (q.global_batch < 0) throw flag_error("--global-batch", "must be positive");
  const std::vector<int> hpz_sizes = search_scope(q, shape, world, notes);
  const bool multi_node = shape.nodes > 1;
  // The limits of the scenario schema: accumulation steps and tokens per GPU.
  const auto max_accum = static_cast<long long>(find_scenario_param("--grad-accum")->max);
  const auto max_tokens = static_cast<long long>(find_scenario_param("--tokens-per-gpu")->max);
  std::string too_deep;  // a micro-batch whose accumulation would pass max_accum
  std::vector<Candidate> out;
  for (int m : q.micro_batches) {
    if (m <= 0) throw flag_error("--micro-batch", fmt::format("must be positive (got {})", m));
    if (std::int64_t{m} * shape.seq_len > max_tokens)  // 64-bit: both factors are int
      throw flag_error("--micro-batch",
                       fmt::format("micro-batch {} x sequence length {} is more than {} tokens "
                                   "per GPU",
                                   m, shape.seq_len, max_tokens));
    int ga = 1;
    if (q.global_batch > 0) {
      if (q.global_batch % (world * m) != 0) continue;
      const long long steps = q.global_batch / (world * m);
      if (steps > max_accum) {
        too_deep = fmt::format(
            "{} sequences on {} GPUs at micro-batch {} need {} accumulation steps, more than the "
            "limit of {}",
            q.global_batch, world, m, steps, max_accum);
        if (notes) notes->push_back(too_deep + ": that micro-batch is not searched");
        continue;
      }
      ga = static_cast<int>(steps);
    }
    add_zero3_candidates(out, q, shape, m, ga, hpz_sizes, multi_node);
    add_other_candidates(out, q, shape, m, ga, multi_node);
  }
  if (out.empty() && !too_deep.empty()) throw flag_error("--global-batch", too_deep);
  if (out.empty())
    throw flag_error(
        "--global-batch",
        fmt::format("{} sequences cannot be split as {} GPUs x micro-batch x accumulation for any "
                    "micro-batch in the search (give a multiple of {})",
                    q.global_batch, world, world));
  return out;
}

UnfitScreen unfit_screen() {
  return [](const Scenario& s, SimContext& context) { return unfit_refusal(s, context); };
}

PlanResult run_plan(const PlanRequest& q, const ClusterShape& shape,
                    const sweep::ScenarioRunner& runner, const UnfitScreen& screen) {
  PlanResult plan;
  std::vector<Candidate> cands = enumerate_candidates(q, shape, &plan.notes);
  plan.enumerated = cands.size();
  for (auto& c : cands) c.scenario.tier = NetworkTier::Analytic;
  // What no node count can fit is refused unbuilt and counted as not fitting; when that is every
  // candidate, the plan is refused (the one that needs the least).
  cands = screen_unfit(std::move(cands), plan, screen);
  // Analytic tier over the rest: cheap, prunes what does not fit and what is clearly slow.
  std::vector<Scenario> analytic;
  analytic.reserve(cands.size());
  for (const auto& c : cands) analytic.push_back(c.scenario);
  auto results = run_all(analytic, runner, q.threads);
  std::vector<Candidate> feasible;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!fits(results[i])) {
      ++plan.infeasible;
      note_closest(plan, cands[i], std::move(results[i]));
      continue;
    }
    cands[i].result = std::move(results[i]);
    feasible.push_back(std::move(cands[i]));
  }
  std::stable_sort(feasible.begin(), feasible.end(), better);
  // Flow tier on the best: contention and overlap details can reorder close candidates. The
  // decision rule compares the candidates within kTieFraction of the fastest, so every one of
  // those is confirmed, beside the --confirm best.
  std::size_t n =
      std::min<std::size_t>(feasible.size(), static_cast<std::size_t>(std::max(0, q.confirm_top)));
  if (n > 0)
    while (n < feasible.size() &&
           feasible[n].tokens_per_s() >= (1 - kTieFraction) * feasible.front().tokens_per_s())
      ++n;
  std::vector<Scenario> flow;
  for (std::size_t i = 0; i < n; ++i) {
    feasible[i].scenario.tier = NetworkTier::Flow;
    flow.push_back(feasible[i].scenario);
  }
  auto confirmed = run_all(flow, runner, q.threads);
  std::vector<Candidate> ranked;
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    if (i < n) {
      if (!fits(confirmed[i])) {
        ++plan.infeasible;
        note_closest(plan, feasible[i], std::move(confirmed[i]));
        continue;
      }
      feasible[i].result = std::move(confirmed[i]);
      feasible[i].confirmed = true;
    }
    ranked.push_back(std::move(feasible[i]));
  }
  std::stable_sort(ranked.begin(), ranked.end(), better);
  plan.ranked = std::move(ranked);
  plan.recommended = recommend(plan.ranked, false);
  plan.recommended_deepspeed = recommend(plan.ranked, true);
  // Pareto front: no other candidate uses less memory and delivers more throughput.
  std::vector<std::size_t> order(plan.ranked.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto &x = plan.ranked[a], &y = plan.ranked[b];
    if (x.peak_bytes() != y.peak_bytes()) return x.peak_bytes() < y.peak_bytes();
    return x.tokens_per_s() > y.tokens_per_s();
  });
  double best = -1;
  for (auto i : order)
    if (plan.ranked[i].tokens_per_s() > best) {
      best = plan.ranked[i].tokens_per_s();
      plan.pareto.push_back(i);
    }
  return plan;
}

std::optional<std::size_t> recommend(const std::vector<Candidate>& ranked, bool deepspeed_only) {
  const auto compared = [deepspeed_only](const Candidate& c) {
    return !deepspeed_only || id_of(c.scenario).family() == StrategyFamily::DeepSpeed;
  };
  const bool any_confirmed = std::any_of(
      ranked.begin(), ranked.end(), [&](const Candidate& c) { return c.confirmed && compared(c); });
  std::vector<DecisionOption> options;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const Candidate& c = ranked[i];
    if (!compared(c) || (any_confirmed && !c.confirmed)) continue;
    options.push_back({c.tokens_per_s(), c.techniques, fits(c.result)});
    index.push_back(i);
  }
  const std::optional<std::size_t> pick = recommend_index(options);
  if (!pick) return std::nullopt;
  return index[*pick];
}

std::string describe(const Candidate& c) {
  const Scenario& s = c.scenario;
  const StrategyId id = id_of(s);
  std::string name = id.display();
  std::vector<std::string> knobs;
  const bool qwz = id.qwz, hpz = id.hpz, qgz = id.qgz;
  if (hpz)
    knobs.push_back(
        fmt::format("hpZ {}", s.hpz_partition > 0 ? std::to_string(s.hpz_partition) : "node"));
  if (qwz) knobs.push_back(fmt::format("qwZ INT{}", s.quant_bits_weights));
  if (qgz) knobs.push_back(fmt::format("qgZ INT{}", s.quant_bits_grads));
  if (id.kind == StrategyKind::Hsdp)
    knobs.push_back(
        fmt::format("shard group {}", s.hsdp_size > 0 ? std::to_string(s.hsdp_size) : "node"));
  std::string out = name;
  if (!knobs.empty()) {
    out += " (";
    for (std::size_t i = 0; i < knobs.size(); ++i) out += (i ? ", " : "") + knobs[i];
    out += ")";
  }
  return out;
}

std::string explain_winner(const Candidate& w, const Candidate& r) {
  const StepTimeBreakdown& a = w.result.breakdown;
  const StepTimeBreakdown& b = r.result.breakdown;
  std::string o = fmt::format("Why {} wins over the runner-up {}:\n", describe(w), describe(r));
  o += fmt::format("  throughput {:.0f} vs {:.0f} tokens/s ({:+.1f}%), step {} vs {}",
                   w.tokens_per_s(), r.tokens_per_s(),
                   (w.tokens_per_s() / r.tokens_per_s() - 1) * 100, format_time(w.step_time_s()),
                   format_time(r.step_time_s()));
  if (w.micro_batch != r.micro_batch || w.scenario.grad_accum != r.scenario.grad_accum)
    o += fmt::format(" (micro-batch {} x {} vs {} x {})", w.micro_batch, w.scenario.grad_accum,
                     r.micro_batch, r.scenario.grad_accum);
  if (w.scenario.activation_checkpointing != r.scenario.activation_checkpointing)
    o += fmt::format(" (activation checkpointing {} vs {})",
                     checkpointing_word(w.scenario.activation_checkpointing),
                     checkpointing_word(r.scenario.activation_checkpointing));
  o += "\n";
  struct Part {
    const char* name;
    double x, y;
  };
  std::vector<Part> parts = {
      {"compute", a.compute_s, b.compute_s},
      {"recompute", a.recompute_s, b.recompute_s},
      {"optimizer", a.optimizer_s, b.optimizer_s},
      {"stage-3 parameter fetch", a.param_fetch_s, b.param_fetch_s},
      {"quantization kernels", a.quant_kernels_s, b.quant_kernels_s},
      {"exposed all-gather", a.exposed_comm.all_gather_s, b.exposed_comm.all_gather_s},
      {"exposed reduce-scatter", a.exposed_comm.reduce_scatter_s, b.exposed_comm.reduce_scatter_s},
      {"exposed all-to-all", a.exposed_comm.all_to_all_s, b.exposed_comm.all_to_all_s}};
  std::stable_sort(parts.begin(), parts.end(), [](const Part& p, const Part& q) {
    return std::fabs(p.x - p.y) > std::fabs(q.x - q.y);
  });
  for (const auto& p : parts) {
    if (std::fabs(p.x - p.y) < 1e-7) continue;
    o += fmt::format("  {:<24} {:>12} vs {:>12}  ({}{})\n", p.name, format_time(p.x),
                     format_time(p.y), p.x < p.y ? "-" : "+", format_time(std::fabs(p.x - p.y)));
  }
  o += fmt::format("  {:<24} {:>12} vs {:>12}\n", "peak memory per GPU",
                   format_bytes(w.peak_bytes()), format_bytes(r.peak_bytes()));
  return o;
}

ordered_json deepspeed_config(const Candidate& c, const ClusterShape& shape) {
  const Scenario& s = c.scenario;
  const StrategyId id = id_of(s);
  if (id.family() != StrategyFamily::DeepSpeed)
    throw flag_error("--emit-deepspeed",
                     fmt::format("{} is no DeepSpeed strategy: it has no ds_config", id.display()));
  Strategy st = c.result.scenario.strategy;  // what was simulated, with the candidate's groups
  if (s.hpz_partition > 0) st.hpz_size = s.hpz_partition;
  if (s.hsdp_size > 0) st.shard_size = s.hsdp_size;
  ordered_json zero = zero_optimization_block(st, shape.gpus_per_node);
  const long long world = static_cast<long long>(shape.nodes) * shape.gpus_per_node;
  // In the order of DeepSpeed's configuration documentation: batch sizes, precision, ZeRO.
  return ordered_json{
      {"train_batch_size", world * c.micro_batch * s.grad_accum},
      {"train_micro_batch_size_per_gpu", c.micro_batch},
      {"gradient_accumulation_steps", s.grad_accum},
      {c.result.scenario.strategy.dtype, {{"enabled", true}}},  // what was simulated
      {"zero_optimization", std::move(zero)}};
}

namespace {

json rank_or_null(const std::optional<std::size_t>& index) {
  return index ? json(*index + 1) : json(nullptr);
}

// explain_winner's comparison of #r with #1, headed as what it is: not a win.
std::string against_fastest(const std::string& text, std::size_t r) {
  return fmt::format("#{} against #1:", r + 1) + text.substr(text.find('\n'));
}

// Why the recommendation: against the runner-up when it is the fastest, else against the fastest
// (what the decision rule gave up for fewer ZeRO++ techniques).
std::string explain_recommendation(const PlanResult& plan) {
  const std::size_t r = *plan.recommended;
  if (r != 0)
    return fmt::format(
               "Recommended: #{} {}: {:.2f}% slower than #1 {}, within the {:.0f}% tie, with "
               "fewer ZeRO++ techniques ({} vs {}).\n",
               r + 1, describe(plan.ranked[r]),
               100 * (1 - plan.ranked[r].tokens_per_s() / plan.ranked[0].tokens_per_s()),
               describe(plan.ranked[0]), 100 * kTieFraction, plan.ranked[r].techniques,
               plan.ranked[0].techniques) +
           against_fastest(explain_winner(plan.ranked[r], plan.ranked[0]), r);
  std::string o = fmt::format("Recommended: #1 {}, the fastest", describe(plan.ranked[0]));
  o += plan.ranked.size() > 1 ? ".\n" + explain_winner(plan.ranked[0], plan.ranked[1]) : ".\n";
  return o;
}

}  // namespace

json plan_document(const PlanResult& plan) {
  json cands = json::array();
  for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
    const auto& c = plan.ranked[i];
    cands.push_back({{"rank", i + 1},
                     {"description", describe(c)},
                     {"micro_batch", c.micro_batch},
                     {"grad_accum", c.scenario.grad_accum},
                     {"activation_checkpointing", c.scenario.activation_checkpointing},
                     {"tier", c.confirmed ? "flow" : "analytic"},
                     {"scenario", sweep::scenario_to_json(c.scenario)},
                     {"result", to_json(c.result)}});
  }
  json pareto = json::array();
  for (auto i : plan.pareto) pareto.push_back(i + 1);
  return json{{"schema_version", kResultSchemaVersion},
              {"kind", "plan"},
              {"enumerated", plan.enumerated},
              {"infeasible", plan.infeasible},
              {"notes", plan.notes},
              {"candidates", cands},
              {"pareto_ranks", pareto},
              {"recommended_rank", rank_or_null(plan.recommended)},
              {"recommended_deepspeed_rank", rank_or_null(plan.recommended_deepspeed)}};
}

std::string render_plan(const PlanResult& plan, std::size_t top) {
  std::string o = fmt::format(
      "Searched {} configurations on the analytic tier; {} do not fit in GPU memory; the best {} "
      "were "
      "confirmed on the flow tier.\n",
      plan.enumerated, plan.infeasible,
      std::count_if(plan.ranked.begin(), plan.ranked.end(),
                    [](const Candidate& c) { return c.confirmed; }));
  for (const auto& n : plan.notes) o += "Note: " + n + "\n";
  if (plan.ranked.empty()) {
    o += "No configuration fits in GPU memory.\n";
    if (plan.closest) o += no_fit_advice(plan.closest->result, describe(*plan.closest));
    return o;
  }
  // TFLOPs/GPU is Megatron-LM's formula (the ZeRO++ paper's); MFU the architecture's model FLOPs.
  // ckpt: activation checkpointing, searched on and off.
  // Printed in rank order (throughput; step time at a fixed global batch); * marks the
  // recommendation.
  o += fmt::format("\n{:>5}  {:<44} {:>5} {:>5} {:>4} {:>12} {:>10} {:>6} {:>12} {:>12} {:>8}\n",
                   "rank", "configuration", "micro", "accum", "ckpt", "step", "TFLOPs/GPU", "MFU",
                   "tokens/s", "peak mem", "tier");
  for (std::size_t i = 0; i < plan.ranked.size() && i < top; ++i) {
    const auto& c = plan.ranked[i];
    o += fmt::format(
        "{:>5}  {:<44} {:>5} {:>5} {:>4} {:>12} {:>10.1f} {:>5.1f}% {:>12.0f} {:>12} {:>8}\n",
        fmt::format("{}{}", plan.recommended == i ? "*" : "", i + 1), describe(c), c.micro_batch,
        c.scenario.grad_accum, checkpointing_word(c.scenario.activation_checkpointing),
        format_time(c.step_time_s()), c.result.tflops_per_gpu, 100 * c.result.mfu, c.tokens_per_s(),
        format_bytes(c.peak_bytes()), c.confirmed ? "flow" : "analytic");
  }
  if (plan.recommended) o += "\n" + explain_recommendation(plan);
  o += "\nMemory/throughput Pareto front (no other configuration uses less memory and runs "
       "faster):\n";
  for (auto i : plan.pareto) {
    const auto& c = plan.ranked[i];
    o += fmt::format(
        "  #{:<4} {:>12}  {:>12.0f} tokens/s  {}, micro-batch {} x {}, checkpointing {}\n", i + 1,
        format_bytes(c.peak_bytes()), c.tokens_per_s(), describe(c), c.micro_batch,
        c.scenario.grad_accum, checkpointing_word(c.scenario.activation_checkpointing));
  }
  return o;
}

}  // namespace zerosim::plan
