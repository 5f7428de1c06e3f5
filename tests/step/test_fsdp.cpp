// PyTorch FSDP (sim/step/lower_fsdp.cpp) end to end on the paper's cluster (24 DGX-2 nodes, 384
// V100s, gpt-18b, FP16): the bytes of each phase against closed forms over the FSDP units
// (FULL_SHARD gathers every unit before its forward and every block again before its backward, the
// root once; SHARD_GRAD_OP gathers once; one reduce-scatter of every unit per micro-step, twice the
// bytes with a float32 reduce_dtype; HYBRID_SHARD's all-reduce of the shards across nodes), the
// rate limiter's in-flight bound read from the step's trace, the memory terms, and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/step/simulate.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/comm_totals.hpp"
#include "tests/support/files.hpp"
#include "tests/support/fsdp_units.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/paper_scenario.hpp"
#include "tests/support/simulate_unrefused.hpp"

using namespace zerosim;
using zerosim::testing::Approx;
using zerosim::testing::simulate_unrefused;

namespace {

constexpr double W = 384, Y = 24, N = 16;  // ranks, nodes, GPUs per node

// Parameters of the root unit (embedding, final norm, head) and of all units, from the modules.
using Units = FsdpUnitTotals;
Units units() { return fsdp_unit_totals(load_model("gpt-18b"), 1024, 512); }

// A world ring over Y nodes: Y S (W-1)/W bytes of an S-byte buffer cross the network.
double ring_inter(double S) { return Y * S * (W - 1) / W; }

Scenario fsdp(const std::string& strategy, int grad_accum = 1) {
  Scenario s = paper_scenario(strategy);
  s.grad_accum = grad_accum;
  return s;
}

}  // namespace

TEST_CASE("the model's parameters are the units' parameters") {
  const Units u = units();
  CHECK(u.all == static_cast<double>(total_param_count(load_model("gpt-18b"))));
  CHECK(u.blocks == load_model("gpt-18b").layers);
  CHECK(u.root > 0);
}

TEST_CASE(
    "FULL_SHARD: every unit gathered before its forward, every block again before its "
    "backward, one reduce-scatter per unit") {
  const Units u = units();
  const auto r = simulate_unrefused(fsdp("fsdp"));
  CHECK(r.scenario.strategy.name() == "fsdp");
  CHECK(r.scenario.strategy.fsdp.sharding == FsdpSharding::FullShard);
  const double units_n = u.blocks + 1;
  CHECK(ops(r.comm.by_phase, "forward_all_gather") == units_n);
  CHECK(ops(r.comm.by_phase, "backward_all_gather") == u.blocks);  // the root stays gathered
  CHECK(ops(r.comm.by_phase, "gradient_reduction") == units_n);
  CHECK(inter(r.comm.by_phase, "forward_all_gather") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "backward_all_gather") ==
        Approx(ring_inter(2 * (u.all - u.root))).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "gradient_reduction") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
  CHECK(ops(r.comm.by_collective, "all_reduce") == 0);
  // No DeepSpeed fetch cost, no ZeRO++ kernels.
  CHECK(r.breakdown.param_fetch_s == 0);
  CHECK(r.breakdown.quant_kernels_s == 0);
}

TEST_CASE("SHARD_GRAD_OP gathers once per micro-step; every micro-step reduce-scatters") {
  const Units u = units();
  const auto r = simulate_unrefused(fsdp("fsdp-grad-op", 3));
  CHECK(ops(r.comm.by_phase, "forward_all_gather") == 3 * (u.blocks + 1));
  CHECK(ops(r.comm.by_phase, "backward_all_gather") == 0);
  CHECK(inter(r.comm.by_phase, "forward_all_gather") ==
        Approx(3 * ring_inter(2 * u.all)).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "gradient_reduction") ==
        Approx(3 * ring_inter(2 * u.all)).epsilon(1e-9));
}

TEST_CASE(
    "a float32 reduce_dtype doubles the reduce-scatter bytes; a float32 param_dtype the "
    "all-gathers'") {
  const Units u = units();
  auto s = fsdp("fsdp");
  s.fsdp_reduce_dtype = FsdpDtype::Fp32;
  const auto r = simulate_unrefused(s);
  CHECK(r.scenario.strategy.grad_comm_bytes == 4);
  CHECK(inter(r.comm.by_phase, "gradient_reduction") ==
        Approx(ring_inter(4 * u.all)).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "forward_all_gather") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
  s.fsdp_param_dtype = FsdpDtype::Fp32;
  s.fsdp_reduce_dtype = FsdpDtype::Auto;  // reduce_dtype None: param_dtype
  const auto f = simulate_unrefused(s);
  CHECK(f.scenario.strategy.fsdp.param_bytes == 4);
  CHECK(f.scenario.strategy.grad_comm_bytes == 4);
  CHECK(inter(f.comm.by_phase, "forward_all_gather") ==
        Approx(ring_inter(4 * u.all)).epsilon(1e-9));
}

TEST_CASE(
    "HYBRID_SHARD: FULL_SHARD inside each node, the gradient shards all-reduced across "
    "nodes") {
  const Units u = units();
  const auto r = simulate_unrefused(fsdp("fsdp-hybrid", 2));
  CHECK(r.scenario.strategy.shard_size == 16);
  CHECK(inter(r.comm.by_phase, "forward_all_gather") == 0);
  CHECK(inter(r.comm.by_phase, "backward_all_gather") == 0);
  CHECK(inter(r.comm.by_collective, "reduce_scatter") == 0);
  // Per unit and micro-step, one ring all-reduce of its 2 n / S shard in each replica group of Y
  // ranks, one per node: every rank sends 2 (Y-1)/Y of it, all across the network.
  CHECK(ops(r.comm.by_collective, "all_reduce") == 2 * (u.blocks + 1));
  CHECK(inter(r.comm.by_collective, "all_reduce") ==
        Approx(2 * W * 2 * (2 * u.all / N) * (Y - 1) / Y).epsilon(1e-9));
}

TEST_CASE(
    "the rate limiter: with limit_all_gathers no more than two blocks gathered ahead in "
    "forward") {
  // Fast network, slow compute: without the limiter the CPU issues every forward all-gather at
  // once; with it, block k's all-gather waits until block k-2's forward has ended.
  ScratchDir dir("fsdp_limiter");
  const std::string trace = (dir.path / "t.json").string();
  for (const bool limit : {true, false}) {
    CAPTURE(limit);
    Scenario s = fsdp("fsdp");
    s.nics_per_node = 8;
    s.nic_gbps = 800;
    s.tokens_per_gpu = 8192;
    s.fsdp_limit_all_gathers = limit;
    simulate_unrefused(s, trace);
    const json t = json::parse(slurp(trace));
    std::map<int, double> ag_start, fwd_end;  // by layer
    for (const auto& e : t.at("traceEvents")) {
      if (e.at("ph") != "X") continue;
      const std::string name = e.at("name");
      const double ts = e.at("ts"), end = ts + e.at("dur").get<double>();
      if (name.rfind("mb0.fwd.unit", 0) == 0 && name.size() > 3 &&
          name.compare(name.size() - 3, 3, ".ag") == 0)
        ag_start[std::stoi(name.substr(12))] = ts;
      if (name.rfind("mb0.fwd.layer", 0) == 0) {
        const int layer = std::stoi(name.substr(13));
        fwd_end[layer] = std::max(fwd_end[layer], end);
      }
    }
    REQUIRE(ag_start.size() == 40);
    int most = 0;  // blocks whose gather has started and whose forward has not ended
    for (const auto& [k, start] : ag_start) {
      int held = 0;
      for (const auto& [i, s0] : ag_start)
        if (s0 <= start && fwd_end.at(i) > start + 1e-6) ++held;  // trace times in us
      most = std::max(most, held);
      if (limit && k >= 2) CHECK(start >= fwd_end.at(k - 2) - 1e-6);
    }
    if (limit)
      CHECK(most <= 2);
    else
      CHECK(most > 2);
  }
}

TEST_CASE(
    "FSDP memory: 16 bytes per parameter over the shard, the unsharded units in "
    "param_dtype") {
  const Units u = units();
  const auto full = simulate_unrefused(fsdp("fsdp")), op = simulate_unrefused(fsdp("fsdp-grad-op"));
  for (const auto* r : {&full, &op}) {
    CHECK(r->memory.component("params_shard_fp32") == Approx(4 * u.all / W).epsilon(1e-12));
    CHECK(r->memory.component("grads_shard_fp32") == Approx(4 * u.all / W).epsilon(1e-12));
    CHECK(r->memory.component("optimizer_fp32") == Approx(8 * u.all / W).epsilon(1e-12));
  }
  // FULL_SHARD: the root and three blocks (BACKWARD_PRE: the finishing, the running and the
  // prefetched one); SHARD_GRAD_OP: the whole model between forward and backward.
  CHECK(full.memory.component("unsharded_params") ==
        Approx(2 * (u.root + 3 * u.block)).epsilon(1e-12));
  CHECK(op.memory.component("unsharded_params") == Approx(2 * u.all).epsilon(1e-12));
  auto post = fsdp("fsdp");
  post.fsdp_backward_prefetch = BackwardPrefetch::Post;
  CHECK(simulate_unrefused(post).memory.component("unsharded_params") ==
        Approx(2 * (u.root + 2 * u.block)).epsilon(1e-12));
  auto nolimit = fsdp("fsdp");
  nolimit.fsdp_limit_all_gathers = false;
  CHECK(simulate_unrefused(nolimit).memory.component("unsharded_params") ==
        Approx(2 * u.all).epsilon(1e-12));
  // fp32 reduce: each unsharded gradient also has its float32 copy.
  auto fp32 = fsdp("fsdp");
  fp32.fsdp_reduce_dtype = FsdpDtype::Fp32;
  CHECK(simulate_unrefused(fp32).memory.component("unsharded_grads") ==
        Approx((2 + 4) * (u.root + 2 * u.block)).epsilon(1e-12));
  CHECK(full.memory.component("unsharded_grads") ==
        Approx(2 * (u.root + 2 * u.block)).epsilon(1e-12));
}

TEST_CASE(
    "backward prefetch: BACKWARD_PRE overlaps the next gather with the gradient "
    "computation; none serializes them") {
  auto s = fsdp("fsdp");
  const auto pre = simulate_unrefused(s);
  s.fsdp_backward_prefetch = BackwardPrefetch::Post;
  const auto post = simulate_unrefused(s);
  s.fsdp_backward_prefetch = BackwardPrefetch::None;
  const auto none = simulate_unrefused(s);
  // Same collectives and bytes whichever the order.
  for (const auto* r : {&post, &none})
    for (const auto& kv : pre.comm.by_phase) {
      // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
      const auto& phase = kv.first;
      const auto& t = kv.second;
      CAPTURE(phase);
      CHECK(ops(r->comm.by_phase, phase) == t.count);
      CHECK(inter(r->comm.by_phase, phase) == t.inter_node_bytes);
    }
  CHECK(pre.step_time_s <= post.step_time_s);
  CHECK(post.step_time_s <= none.step_time_s);
  CHECK(pre.step_time_s < none.step_time_s);
}

TEST_CASE("gradient accumulation: micro-steps 2..G repeat micro-step 1") {
  for (const char* st : {"fsdp", "fsdp-grad-op", "fsdp-hybrid"}) {
    CAPTURE(st);
    auto s = fsdp(st, 4);
    s.tier = NetworkTier::Analytic;
    const auto fast = simulate_unrefused(s);
    ReferenceModes modes;
    modes.extend_accumulation = false;
    const auto slow = simulate_unrefused(s, modes);
    CHECK(fast.step_time_s == Approx(slow.step_time_s).epsilon(1e-12));
    CHECK(fast.comm.inter_node_bytes == Approx(slow.comm.inter_node_bytes).epsilon(1e-12));
  }
}

TEST_CASE("both tiers run an FSDP row; FSDP refuses ZeRO++'s techniques and DeepSpeed's knobs") {
  for (const NetworkTier tier : {NetworkTier::Flow, NetworkTier::Analytic}) {
    Scenario s;
    s.cluster = "dgx-a100";
    s.nodes = 2;
    s.model = "llama-2-7b";
    s.strategy = "fsdp";
    s.tokens_per_gpu = 4096;
    s.seq_len = 2048;
    s.grad_accum = 2;
    s.tier = tier;
    const auto r = simulate_unrefused(s);
    CHECK(r.step_time_s > 0);
    CHECK(r.scenario.strategy.dtype == "bf16");
  }
  const auto e = caught_input_error([] { simulate_unrefused(fsdp("fsdp+qwz")); });
  CHECK(std::string(e.what()).find("PyTorch FSDP has no quantized collectives") !=
        std::string::npos);
  auto hpz = fsdp("fsdp");
  hpz.hpz_partition = 8;
  expect_input_error([&] { simulate_unrefused(hpz); }, "<command line>", "--hpz-size", "needs hpZ");
  auto knob = fsdp("zero3");
  knob.fsdp_forward_prefetch = true;
  expect_input_error([&] { simulate_unrefused(knob); }, "<command line>", "--fsdp-forward-prefetch",
                     "needs an FSDP strategy");
}
