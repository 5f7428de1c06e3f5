// Hand-made StepResults (sim/result/step_result.hpp), computed by a simple closed form from the
// scenario, so sweep/plan/report machinery can be tested without the
// simulator.
#pragma once
#include <algorithm>
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/step/micro_batch.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::testing {

// step = compute + exposed comm, comm shrinking with network bandwidth and with each ZeRO++
// technique; ZeRO-1, ZeRO-2 and HSDP communicate as ZeRO-3 here and hold more model states.
inline StepResult fake_result(const Scenario& s) {
  const StrategyId id = parse_strategy_id(s.strategy);
  const bool qwz = id.qwz, hpz = id.hpz, qgz = id.qgz;
  const int nodes = s.nodes > 0 ? s.nodes : 1;
  const int nics = s.nics_per_node > 0 ? s.nics_per_node : 8;
  const double gbps = s.nic_gbps > 0 ? s.nic_gbps : 100;
  // The micro-batch by simulate()'s rule (micro_batch.hpp) at the fake's 512-token sequences.
  const int tokens = static_cast<int>(micro_batch_sequences(s, 512)) * 512;
  // Without activation checkpointing the recompute (a fifth of compute here) is saved and every
  // layer keeps its activations (half as much memory again per token).
  const double compute = 1e-4 * tokens * (s.activation_checkpointing ? 1.0 : 0.8);
  const double inter = nodes > 1 ? 1.0 : 0.0;
  const double ag = inter * 40.0 / (nics * gbps) * (qwz ? 0.5 : 1.0) * (hpz ? 0.5 : 1.0);
  const double rs = inter * 20.0 / (nics * gbps) * (qgz ? 0.25 : 1.0);
  const double quant = (qwz ? 0.01 : 0.0) + (qgz ? 0.01 : 0.0);
  const double step = compute + ag + rs + quant;
  const double gpus = 16.0 * nodes;
  const double peak = 10e9 +
                      (hpz ? 2.25e9 * 16 / (s.hpz_partition > 0 ? s.hpz_partition : 16) : 0) +
                      // FSDP: 0.5e9 more than ZeRO-3 (or HSDP for HYBRID_SHARD), FSDP2 0.25e9;
                      // SHARD_GRAD_OP keeps the model gathered.
                      (id.kind == StrategyKind::Zero1             ? 9e9
                       : id.kind == StrategyKind::Zero2           ? 4.5e9
                       : id.kind == StrategyKind::Hsdp            ? 2.25e9
                       : id.kind == StrategyKind::FsdpFullShard   ? 0.5e9
                       : id.kind == StrategyKind::FsdpShardGradOp ? 6e9
                       : id.kind == StrategyKind::FsdpHybridShard ? 2.75e9
                       : id.kind == StrategyKind::Fsdp2           ? 0.25e9
                                                                  : 0) +
                      (s.activation_checkpointing ? 2e6 : 3e6) * tokens;
  StepResult r;
  ScenarioEcho& e = r.scenario;
  e.cluster = s.cluster;
  e.nodes = nodes;
  e.gpus_per_node = 16;
  e.world_size = static_cast<int>(gpus);
  e.nics_per_node = nics;
  e.nic_gbps = gbps;
  e.model.name = s.model;  // a valid shape for the result schema; nothing reads it
  e.model.layers = e.model.heads = e.model.kv_heads = 1;
  e.model.hidden = e.model.ffn = e.model.vocab = 1;
  e.model.seq = e.seq_len = 512;
  e.micro_batch_sequences = tokens / 512;
  e.strategy = strategy_of(id);
  e.tokens_per_gpu = tokens;
  e.grad_accum = s.grad_accum;
  e.tier = choice_name(s.tier);
  e.activation_checkpointing = s.activation_checkpointing;
  e.attention = s.attention == AttentionChoice::Flash ? "flash" : "eager";
  r.step_time_s = step;
  r.tflops_per_gpu = 1e-2 * tokens / step;
  r.tokens_per_s = tokens * gpus * s.grad_accum / step;
  r.breakdown.compute_s = compute * 0.75;
  r.breakdown.recompute_s = s.activation_checkpointing ? compute * 0.2 : 0;
  r.breakdown.optimizer_s = compute * 0.05;
  r.breakdown.quant_kernels_s = quant;
  r.breakdown.exposed_comm.all_gather_s = ag;
  r.breakdown.exposed_comm.reduce_scatter_s = rs;
  r.breakdown.exposed_comm.total_s = ag + rs;
  r.comm.inter_node_bytes = inter * 1e9;
  r.comm.intra_node_bytes = 2e9;
  r.memory.peak_bytes = peak;
  r.memory.capacity_bytes = 32e9;
  r.memory.fits = peak <= 32e9;
  r.memory.components = {{"weights", 1e9}};
  return r;
}

// fake_result as a sweep's ScenarioRunner (no context needed).
inline StepResult fake_runner(const Scenario& s, SimContext&) { return fake_result(s); }

// A sweep document of fake results over the paper's 384-GPU grid (24 DGX-2 nodes, 1K/2K tokens,
// 1/2/4/8 x 100 Gbps, ZeRO-3, each technique alone, ZeRO++) for one model.
inline json fake_paper_sweep(const std::string& model = "gpt-18b") {
  Scenario base;
  base.cluster = "dgx2-v100";
  base.model = model;
  auto s = sweep::expand(
      base, {{"--nodes", {"24"}},
             {"--tokens-per-gpu", {"1024", "2048"}},
             {"--nics-per-node", {"1", "2", "4", "8"}},
             {"--nic-gbps", {"100"}},
             {"--strategy", {"zero3", "zero3+qwz", "zero3+hpz", "zero3+qgz", "zeropp"}}});
  std::vector<StepResult> results;
  for (const auto& sc : s) results.push_back(fake_result(sc));
  return sweep::sweep_document(json::object(), results);
}

}  // namespace zerosim::testing
