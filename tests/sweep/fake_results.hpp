// Hand-written result JSON with the keys of simulate() (sim/step/simulate.hpp), computed by a
// simple closed form from the scenario, so sweep/plan/report machinery can be tested without the
// simulator.
#pragma once
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::testing {

// step = compute + exposed comm, comm shrinking with network bandwidth and with each ZeRO++
// technique.
inline json fake_result(const Scenario& s) {
  const bool all = s.strategy == "zeropp";
  const bool qwz = all || s.strategy.find("qwz") != std::string::npos;
  const bool hpz = all || s.strategy.find("hpz") != std::string::npos;
  const bool qgz = all || s.strategy.find("qgz") != std::string::npos;
  const int nodes = s.nodes > 0 ? s.nodes : 1;
  const int nics = s.nics_per_node > 0 ? s.nics_per_node : 8;
  const double gbps = s.nic_gbps > 0 ? s.nic_gbps : 100;
  const double compute = 1e-4 * s.tokens_per_gpu;
  const double inter = nodes > 1 ? 1.0 : 0.0;
  const double ag = inter * 40.0 / (nics * gbps) * (qwz ? 0.5 : 1.0) * (hpz ? 0.5 : 1.0);
  const double rs = inter * 20.0 / (nics * gbps) * (qgz ? 0.25 : 1.0);
  const double quant = (qwz ? 0.01 : 0.0) + (qgz ? 0.01 : 0.0);
  const double step = compute + ag + rs + quant;
  const double gpus = 16.0 * nodes;
  const double peak = 10e9 +
                      (hpz ? 2.25e9 * 16 / (s.hpz_partition > 0 ? s.hpz_partition : 16) : 0) +
                      2e6 * s.tokens_per_gpu;
  return json{
      {"schema_version", kResultSchemaVersion},
      {"scenario",
       {{"cluster", s.cluster},
        {"nodes", nodes},
        {"gpus", gpus},
        {"nics_per_node", nics},
        {"nic_gbps", gbps},
        {"model", s.model},
        {"strategy", s.strategy},
        {"tokens_per_gpu", s.tokens_per_gpu},
        {"grad_accum", s.grad_accum},
        {"tier", s.tier}}},
      {"step_time_s", step},
      {"tflops_per_gpu", 1e-2 * s.tokens_per_gpu / step},
      {"tokens_per_s", s.tokens_per_gpu * gpus * s.grad_accum / step},
      {"breakdown",
       {{"compute_s", compute * 0.75},
        {"recompute_s", compute * 0.2},
        {"optimizer_s", compute * 0.05},
        {"quant_kernels_s", quant},
        {"exposed_comm_s", {{"all_gather", ag}, {"reduce_scatter", rs}, {"all_to_all", 0.0}}}}},
      {"comm", {{"inter_node_bytes", inter * 1e9}, {"intra_node_bytes", 2e9}}},
      {"memory",
       {{"peak_bytes_per_gpu", peak},
        {"capacity_bytes", 32e9},
        {"fits", peak <= 32e9},
        {"components", {{"weights", 1e9}}}}},
      {"warnings", json::array()}};
}

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
  std::vector<json> results;
  for (const auto& sc : s) results.push_back(fake_result(sc));
  return sweep::sweep_document(json::object(), results);
}

}  // namespace zerosim::testing
