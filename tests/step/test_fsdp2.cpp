// PyTorch FSDP2 (fully_shard, sim/step/lower_fsdp2.cpp) on the paper's cluster (24 DGX-2 nodes, 384
// V100s, gpt-18b): the bytes of each phase against closed forms over the units for each
// reshard_after_forward (true: every block gathered again in backward over the world; false: not
// at all; an int n: within groups of n), the copy-in, copy-out and chunk-cat copies priced by the
// profile's copy kernel, the all-gather streams' wait on the copy-out before last read from the
// trace, the memory terms, a 2-D mesh (HSDP), and the refusals.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/profile/cost_profile.hpp"
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

constexpr double W = 384, Y = 24;  // ranks, nodes

using Units = FsdpUnitTotals;
Units units() { return fsdp_unit_totals(load_model("gpt-18b"), 1024, 512); }

double ring_inter(double S) { return Y * S * (W - 1) / W; }

Scenario fsdp2(const std::string& reshard = "true") {
  Scenario s = paper_scenario("fsdp2");
  s.fsdp_reshard_after_forward = reshard;
  return s;
}

// Seconds of the trace's events whose name ends with `suffix`, in phase `phase` ("fwd", "bwd").
double traced_seconds(const json& t, const std::string& phase, const std::string& suffix) {
  double us = 0;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const std::string name = e.at("name");
    if (name.find("." + phase + ".") == std::string::npos) continue;
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      us += e.at("dur").get<double>();
  }
  return us * 1e-6;
}

}  // namespace

TEST_CASE("fsdp2: each unit gathered in forward, each block again in backward over the world") {
  const Units u = units();
  const auto r = simulate_unrefused(fsdp2());
  CHECK(r.scenario.strategy.name() == "fsdp2");
  CHECK(r.scenario.strategy.fsdp.sharding == FsdpSharding::FullyShard);
  CHECK(ops(r.comm.by_phase, "forward_all_gather") == u.blocks + 1);
  CHECK(ops(r.comm.by_phase, "backward_all_gather") == u.blocks);  // the root is kept
  CHECK(ops(r.comm.by_phase, "gradient_reduction") == u.blocks + 1);
  CHECK(inter(r.comm.by_phase, "forward_all_gather") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "backward_all_gather") ==
        Approx(ring_inter(2 * (u.all - u.root))).epsilon(1e-9));
  CHECK(inter(r.comm.by_phase, "gradient_reduction") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
}

TEST_CASE("fsdp2 reshard_after_forward: false gathers once; n gathers the backward within n") {
  const Units u = units();
  const auto keep = simulate_unrefused(fsdp2("false"));
  CHECK(ops(keep.comm.by_phase, "backward_all_gather") == 0);
  CHECK(inter(keep.comm.by_phase, "forward_all_gather") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
  // 16 = a DGX-2's GPUs: the backward's all-gathers stay inside each node.
  const auto node = simulate_unrefused(fsdp2("16"));
  CHECK(node.scenario.strategy.fsdp.reshard_after_forward == 16);
  CHECK(ops(node.comm.by_phase, "backward_all_gather") == u.blocks);
  CHECK(inter(node.comm.by_phase, "backward_all_gather") == 0);
  // 32: rings of 32 ranks over 2 nodes, 12 of them: 2 crossings of S (31/32) each.
  const auto two = simulate_unrefused(fsdp2("32"));
  CHECK(inter(two.comm.by_phase, "backward_all_gather") ==
        Approx(12 * 2 * 2 * (u.all - u.root) * 31 / 32).epsilon(1e-9));
  CHECK(inter(two.comm.by_phase, "gradient_reduction") ==
        Approx(ring_inter(2 * u.all)).epsilon(1e-9));
}

TEST_CASE(
    "fsdp2 on a 2-D mesh (HSDP): gathers and reduce-scatters within the shard groups, the shards "
    "all-reduced across the replicas") {
  const Units u = units();
  Scenario s = fsdp2();
  s.hsdp_size = 16;  // one DGX-2 node per shard group: only the all-reduce crosses nodes
  const auto node = simulate_unrefused(s);
  CHECK(node.scenario.strategy.shard_size == 16);
  CHECK(node.scenario.strategy.hybrid());
  CHECK(inter(node.comm.by_phase, "forward_all_gather") == 0);
  CHECK(inter(node.comm.by_phase, "backward_all_gather") == 0);
  CHECK(inter(node.comm.by_collective, "reduce_scatter") == 0);
  // Per unit, one ring all-reduce of its 2 n / 16 shard in each replica group of Y ranks, one per
  // node: every rank sends 2 (Y-1)/Y of it, all across the network.
  CHECK(ops(node.comm.by_collective, "all_reduce") == u.blocks + 1);
  CHECK(inter(node.comm.by_collective, "all_reduce") ==
        Approx(W * 2 * (2 * u.all / 16) * (Y - 1) / Y).epsilon(1e-9));
  // The same all-reduce bytes as FSDP1's HYBRID_SHARD, whose shard group is the node too.
  Scenario hybrid = paper_scenario("fsdp-hybrid");
  CHECK(inter(simulate_unrefused(hybrid).comm.by_collective, "all_reduce") ==
        Approx(inter(node.comm.by_collective, "all_reduce")).epsilon(1e-12));
  // Model states sharded over the 16 ranks of the group.
  CHECK(node.memory.component("params_shard_fp32") == Approx(4 * u.all / 16).epsilon(1e-12));
  // 32: 12 shard rings of 32 ranks over 2 nodes, 2 crossings of 2 n (31/32) each; replica
  // groups of 12 ranks, one per node pair.
  s.hsdp_size = 32;
  const auto two = simulate_unrefused(s);
  CHECK(inter(two.comm.by_phase, "forward_all_gather") ==
        Approx(12 * 2 * 2 * u.all * 31 / 32).epsilon(1e-9));
  CHECK(inter(two.comm.by_collective, "all_reduce") ==
        Approx(W * 2 * (2 * u.all / 32) * (12.0 - 1) / 12).epsilon(1e-9));
  // reshard_after_forward n: a non-trivial divisor of the shard dimension, not of the world.
  s.hsdp_size = 16;
  s.fsdp_reshard_after_forward = "16";
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>",
                     "--fsdp-reshard-after-forward", "the mesh's shard dimension 16");
  s.fsdp_reshard_after_forward = "8";
  CHECK(inter(simulate_unrefused(s).comm.by_phase, "backward_all_gather") == 0);
  s = paper_scenario("fsdp");
  s.hsdp_size = 16;
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>", "--hsdp-size",
                     "needs --strategy hsdp, fsdp-hybrid or fsdp2");
}

TEST_CASE("fsdp2's copies: copy-in of the shard, copy-out of the unit, chunk-cat of the grads") {
  const Units u = units();
  ScratchDir dir("fsdp2_copies");
  const std::string path = (dir.path / "t.json").string();
  auto s = fsdp2();
  s.fsdp_reduce_dtype = FsdpDtype::Fp32;  // chunk_cat reads 2 bytes and writes 4 per parameter
  s.sm_share = false;  // the copies at the copy kernel's rate, no collective beside them
  const auto r = simulate_unrefused(s, path);
  const json t = json::parse(slurp(path));
  const KernelCost copy = select_cost_profile_for_gpu("", r.scenario.gpu_model).kernel("copy");
  const double U = u.blocks + 1, L = u.blocks;
  const auto cost = [&](double launches, double bytes) {
    return launches * copy.launch_s + bytes / copy.throughput_Bps;
  };
  CHECK(traced_seconds(t, "fwd", ".copy_in") == Approx(cost(U, 2 * 2 * u.all / W)).epsilon(1e-6));
  CHECK(traced_seconds(t, "bwd", ".copy_in") ==
        Approx(cost(L, 2 * 2 * (u.all - u.root) / W)).epsilon(1e-6));
  CHECK(traced_seconds(t, "fwd", ".copy_out") == Approx(cost(U, 2 * 2 * u.all)).epsilon(1e-6));
  CHECK(traced_seconds(t, "bwd", ".copy_out") ==
        Approx(cost(L, 2 * 2 * (u.all - u.root))).epsilon(1e-6));
  CHECK(traced_seconds(t, "bwd", ".chunk_cat") == Approx(cost(U, (2 + 4) * u.all)).epsilon(1e-6));
}

TEST_CASE("fsdp2's forward: a unit's all-gather waits for the copy-out two units back") {
  ScratchDir dir("fsdp2_order");
  const std::string path = (dir.path / "t.json").string();
  Scenario s = fsdp2();
  s.nics_per_node = 8;
  s.nic_gbps = 800;
  s.tokens_per_gpu = 8192;  // fast network, slow compute: the wait is what holds the gathers
  simulate_unrefused(s, path);
  const json t = json::parse(slurp(path));
  std::map<int, double> ag_start, copy_out_end;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const std::string name = e.at("name");
    if (name.rfind("mb0.fwd.unit", 0) != 0) continue;
    const int k = std::stoi(name.substr(12));
    const double ts = e.at("ts");
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".ag") == 0) ag_start[k] = ts;
    if (name.find(".copy_out") != std::string::npos)
      copy_out_end[k] = ts + e.at("dur").get<double>();
  }
  REQUIRE(ag_start.size() == 40);
  int bound = 0;
  for (const auto& [k, start] : ag_start)
    if (k >= 2) {
      CHECK(start >= copy_out_end.at(k - 2) - 1e-6);
      bound += start < copy_out_end.at(k - 1) - 1e-6;  // started before the previous copy-out
    }
  CHECK(bound > 0);  // no rate limiter: gathers do run ahead of the previous unit's copy-out
}

TEST_CASE("fsdp2 memory: the root and four blocks unsharded; false the model; n adds 1/n") {
  const Units u = units();
  CHECK(simulate_unrefused(fsdp2()).memory.component("unsharded_params") ==
        Approx(2 * (u.root + 4 * u.block)).epsilon(1e-12));
  CHECK(simulate_unrefused(fsdp2("false")).memory.component("unsharded_params") ==
        Approx(2 * u.all).epsilon(1e-12));
  CHECK(simulate_unrefused(fsdp2("16")).memory.component("unsharded_params") ==
        Approx(2 * (u.root + 4 * u.block + (u.all - u.root) / 16)).epsilon(1e-12));
}

TEST_CASE("fsdp2's refusals: FSDP1's knobs, a reshard group that does not divide the world") {
  auto s = fsdp2();
  s.fsdp_backward_prefetch = BackwardPrefetch::Post;
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>", "--fsdp-backward-prefetch",
                     "is FSDP1's");
  s = fsdp2();
  s.fsdp_limit_all_gathers = false;
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>", "--fsdp-limit-all-gathers",
                     "no rate limiter");
  for (const char* bad : {"7", "384", "1", "maybe"}) {
    CAPTURE(bad);
    CHECK(caught_input_error([&] { simulate_unrefused(fsdp2(bad)); }).path() ==
          "--fsdp-reshard-after-forward");
  }
  s = paper_scenario("fsdp");
  s.fsdp_reshard_after_forward = "false";
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>",
                     "--fsdp-reshard-after-forward", "needs --strategy fsdp2");
  s = paper_scenario("zero3");
  s.fsdp_reshard_after_forward = "false";
  expect_input_error([&] { simulate_unrefused(s); }, "<command line>",
                     "--fsdp-reshard-after-forward", "needs an FSDP strategy");
}
