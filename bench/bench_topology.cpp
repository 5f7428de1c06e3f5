// Building a cluster (topology graph, routing precomputation, block rotation) and its analytic
// fabric plans: what every scenario on a new cluster pays (BM_AnalyticScenarios in bench_step
// builds one per scenario). Arg: DGX H100 nodes, rail-optimized.
#include <benchmark/benchmark.h>

#include "sim/net/analytic_plan_cache.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/topology/topology.hpp"

using namespace zerosim;

namespace {

ClusterSpec h100(int nodes) {
  ClusterSpec s;
  s.name = "bench";
  s.node_type = "dgx-h100";
  s.nodes = nodes;
  return s;
}

}  // namespace

static void BM_BuildCluster(benchmark::State& state) {
  const ClusterSpec s = h100(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(build_cluster(s));
  state.counters["gpus"] = 8 * static_cast<double>(state.range(0));
}
BENCHMARK(BM_BuildCluster)->Arg(1)->Arg(8)->Arg(32)->Arg(512)->Unit(benchmark::kMicrosecond);

static void BM_BuildClusterAndPlans(benchmark::State& state) {
  const ClusterSpec s = h100(static_cast<int>(state.range(0)));
  const Topology first = build_cluster(s);
  const CostProfile prof = select_cost_profile("", first);
  FabricPlanCache plans;  // held across iterations, as a context holds it
  for (auto _ : state) {
    const Topology t = build_cluster(s);
    benchmark::DoNotOptimize(plans.get(t, prof));
  }
}
BENCHMARK(BM_BuildClusterAndPlans)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);
