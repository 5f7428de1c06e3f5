// Flow-tier throughput: the fair-share solver on random systems (flows solved per second, full and
// incremental), and the flow model on large all-to-alls (wall time of one collective, which must
// stay interactive).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "sim/net/fair_share.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/network_model.hpp"

using namespace zerosim;

namespace {

// F flows over L links, each crossing 4 random links (a route of GPU-NIC-switch-NIC-GPU length).
FairShare random_system(int links, int flows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  FairShare s;
  for (int l = 0; l < links; ++l) s.add_link(1e9 * (1 + rng() % 8));
  std::int32_t path[4];
  for (int f = 0; f < flows; ++f) {
    for (auto& l : path) l = static_cast<std::int32_t>(rng() % static_cast<unsigned>(links));
    s.add_flow(path);
  }
  return s;
}

}  // namespace

static void BM_SolverFull(benchmark::State& state) {
  const int flows = static_cast<int>(state.range(0));
  FairShare s = random_system(flows / 16 + 8, flows, 1);
  for (auto _ : state) benchmark::DoNotOptimize(s.solve_all().size());
  state.counters["flows_per_s"] =
      benchmark::Counter(static_cast<double>(flows) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SolverFull)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// One flow leaves and one arrives per step in a system of many small components (disjoint racks),
// as when a ring phase on one node changes: the re-solve touches one component only.
static void BM_SolverIncremental(benchmark::State& state) {
  const int comps = static_cast<int>(state.range(0)), per = 64, links_per = 8;
  std::mt19937 rng(2);
  FairShare s;
  for (int l = 0; l < comps * links_per; ++l) s.add_link(1e9);
  std::vector<FairShare::FlowId> ids;
  auto add = [&](int c) {
    std::int32_t path[2] = {c * links_per + static_cast<std::int32_t>(rng() % links_per),
                            c * links_per + static_cast<std::int32_t>(rng() % links_per)};
    if (path[0] == path[1]) path[1] = c * links_per + (path[0] % links_per + 1) % links_per;
    return s.add_flow(path);
  };
  for (int c = 0; c < comps; ++c)
    for (int i = 0; i < per; ++i) ids.push_back(add(c));
  s.solve();
  std::size_t k = 0;
  for (auto _ : state) {
    const std::size_t i = k++ % ids.size();
    s.remove_flow(ids[i]);
    ids[i] = add(static_cast<int>(i / per));
    benchmark::DoNotOptimize(s.solve().size());
  }
  state.counters["changes_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SolverIncremental)->Arg(512);

// One all-to-all over every GPU of a rail-optimized DGX H100 cluster, 1 GiB per rank.
static void BM_FlowAllToAll(benchmark::State& state) {
  ClusterSpec spec;
  spec.name = "bench";
  spec.node_type = "dgx-h100";
  spec.nodes = static_cast<int>(state.range(0));
  const Topology topo = build_cluster(spec);
  const CostProfile prof = select_cost_profile("", topo);
  CollectiveOp op;
  op.kind = CollKind::AllToAll;
  op.algorithm = state.range(1) ? Algorithm::TwoHopAllToAll : Algorithm::Direct;
  op.groups = world_group(topo);
  op.bytes = double(1 << 30);
  double t = 0;
  for (auto _ : state) t = collective_time(NetworkTier::Flow, op, topo, prof);
  state.counters["gpus"] = topo.gpu_count();
  state.counters["simulated_ms"] = t * 1e3;
  state.SetLabel(state.range(1) ? "two-hop" : "direct");
}
BENCHMARK(BM_FlowAllToAll)
    ->Args({16, 0})
    ->Args({16, 1})
    ->Args({64, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

// The 4096-GPU cluster (512 nodes) of issues 2 and 8, and 32768 GPUs (4096 nodes). Folding
// (folding.hpp) keeps one leaf block's sources: 16 blocks at 4096 GPUs, 128 at 32768.
static void BM_FlowAllToAll4096(benchmark::State& state) { BM_FlowAllToAll(state); }
BENCHMARK(BM_FlowAllToAll4096)
    ->Args({512, 1})
    ->Args({512, 0})
    ->Args({4096, 1})
    ->Args({4096, 0})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

// Symmetry reduction (sim/net/equitable.hpp) on the ZeRO++ collectives of a DGX-2 rail cluster
// (4 x 100 Gb/s NICs, one leaf per rail): hierarchical all-gather of the world, intra-node
// all-gather (hpZ), two-hop all-to-all (qgZ), started together. Arg 1: nodes; arg 2: symmetry on.
// Counters: merged flows and solver flows.
static void BM_FlowSymmetry(benchmark::State& state) {
  ClusterSpec spec;
  spec.name = "bench";
  spec.node_type = "dgx2-v100";
  spec.nodes = static_cast<int>(state.range(0));
  spec.nics_per_node = 4;
  spec.nic_gbps = 100;
  const Topology topo = build_cluster(spec);
  const CostProfile prof = select_cost_profile("", topo);
  const std::vector<CollectiveOp> ops = {
      {CollKind::AllGather, Algorithm::Hierarchical, world_group(topo), 256e6, "ag"},
      {CollKind::AllGather, Algorithm::IntraNode, intra_node_groups(topo, 16), 128e6, "hpz"},
      {CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(topo), 64e6, "qgz"},
  };
  NetStats stats;
  for (auto _ : state) {
    Engine e;
    FlowNetwork net(e, topo, prof);
    net.set_symmetry(state.range(1) != 0);
    e.add_model(&net);
    for (const CollectiveOp& op : ops) net.start(op, [] {});
    e.run();
    stats = net.stats();
  }
  state.counters["flows"] = static_cast<double>(stats.flows);
  state.counters["solver_flows"] = static_cast<double>(stats.solver_flows);
  state.SetLabel(state.range(1) ? "symmetry" : "full");
}
BENCHMARK(BM_FlowSymmetry)
    ->Args({24, 0})
    ->Args({24, 1})
    ->Args({32, 0})
    ->Args({32, 1})
    ->Unit(benchmark::kMillisecond);
