// The flow tier's speed shortcuts (plan cache with resolved routes, merging flows of one phase that
// share a link list and bytes) must give the same times as the plain simulation: every collective
// of a mixed, overlapping workload completes within 1e-9 relative of the reference run
// (FlowNetwork::set_shortcuts(false)), on a rail-optimized DGX-2 cluster and an oversubscribed
// DGX H100 fat-tree. The analytic tier's per-op cache returns exactly the uncached time.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/net/analytic_network.hpp"
#include "sim/net/analytic_shortcuts.hpp"
#include "sim/net/flow_network.hpp"
#include "tests/net/net_workload.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {

CostProfile profile(const std::string& name) { return test::shipped_profile(name); }

std::vector<CollectiveOp> workload(const Topology& topo) {
  const int per_node = topo.gpus_per_node();
  std::vector<std::vector<int>> pairs;  // cross-node send/recv: node n's GPU i -> node n+1's GPU i
  for (int g = 0; g + per_node < topo.gpu_count(); ++g) pairs.push_back({g, g + per_node});
  std::vector<std::vector<int>> dup;  // the same pair twice: two identical flows in one phase
  dup.push_back({0, per_node});
  dup.push_back({0, per_node});
  std::vector<CollectiveOp> ops = test::data_parallel_ops(topo);
  ops.insert(ops.end(), {
                            {CollKind::SendRecv, Algorithm::Auto, pairs, 2e6, "p2p"},
                            {CollKind::SendRecv, Algorithm::Auto, dup, 1e6, "p2p.dup"},
                        });
  const std::size_t distinct = ops.size();
  for (std::size_t i = 0; i < distinct; ++i) ops.push_back(ops[i]);  // repeats hit the cache
  return ops;
}

// Starts op i at time i * 50 us (so collectives overlap and contend); returns completion times.
std::vector<double> run(const Topology& topo, const CostProfile& prof, bool shortcuts,
                        std::size_t* cached = nullptr) {
  const std::vector<CollectiveOp> ops = workload(topo);
  Engine e;
  FlowNetwork net(e, topo, prof);
  net.set_shortcuts(shortcuts);
  e.add_model(&net);
  std::vector<double> done(ops.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i)
    e.schedule_at(50e-6 * static_cast<double>(i),
                  [&, i] { net.start(ops[i], [&, i] { done[i] = e.now(); }); });
  e.run();
  if (cached) *cached = net.cached_plans();
  return done;
}

void compare(const Topology& topo, const CostProfile& prof) {
  std::size_t cached = 0;
  const std::vector<double> ref = run(topo, prof, false);
  const std::vector<double> fast = run(topo, prof, true, &cached);
  REQUIRE(ref.size() == fast.size());
  CHECK(cached == ref.size() / 2);  // each distinct op lowered once
  for (std::size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    REQUIRE(ref[i] > 0);
    CHECK(std::abs(fast[i] - ref[i]) <= 1e-9 * ref[i]);
  }
}

}  // namespace

TEST_CASE("shortcuts match the plain flow simulation: DGX-2, rail-optimized, 4 nodes") {
  ClusterSpec s;
  s.name = "speed-test";
  s.node_type = "dgx2-v100";
  s.nodes = 4;
  s.nics_per_node = 4;
  s.nic_gbps = 100;
  compare(build_cluster(s), profile("dgx2-v100"));
}

TEST_CASE("shortcuts match the plain flow simulation: DGX H100, 2:1 fat-tree, 6 nodes") {
  ClusterSpec s;
  s.name = "speed-test";
  s.node_type = "dgx-h100";
  s.nodes = 6;
  s.fabric = "fat-tree";
  s.oversubscription = 2;
  compare(build_cluster(s), profile("dgx-h100"));
}

TEST_CASE("identical flows of one phase become one weighted solver flow") {
  ClusterSpec s;
  s.name = "speed-test";
  s.node_type = "dgx-h100";
  s.nodes = 2;
  const Topology topo = build_cluster(s);
  const CostProfile prof = profile("dgx-h100");
  // Two identical 0 -> 8 flows and one 1 -> 9 flow: two solver flows, bytes counted in full.
  CollectivePlan p{{Phase{0, {Flow{0, 8, 1e6}, Flow{0, 8, 1e6}, Flow{1, 9, 1e6}}}}};
  for (bool on : {false, true}) {
    CAPTURE(on);
    Engine e;
    FlowNetwork net(e, topo, prof);
    net.set_shortcuts(on);
    e.add_model(&net);
    net.start_plan(p, [] {});
    e.run();
    CHECK(net.stats().flows == (on ? 2u : 3u));
    CHECK(net.stats().inter_node_bytes == 3e6);
  }
}

TEST_CASE("analytic tier: cached ops take exactly the uncached plan time, stats add per start") {
  ClusterSpec s;
  s.name = "speed-test";
  s.node_type = "dgx-h100";
  s.nodes = 4;
  const Topology topo = build_cluster(s);
  const CostProfile prof = profile("dgx-h100");
  for (const CollectiveOp& op : workload(topo)) {
    CAPTURE(op.label);
    Engine ref_e;
    AnalyticNetwork ref(ref_e, topo, prof);
    // The reference: NCCL's own collectives priced over their patterns' routed flows
    // (unit_plan_by_flows), the compositions by their lowered plan.
    const UnitPlan by_flows = unit_plan_by_flows(op, topo, prof, link_capacities(topo, prof));
    const double expect = is_nccl_collective(op) ? by_flows.op_time_s(op, prof)
                                                 : ref.plan_time(lower_collective(op, topo, prof));
    Engine e;
    AnalyticNetwork net(e, topo, prof);
    e.add_model(&net);
    // One after another (at once they would share the links, test_analytic_network): each
    // takes the plan time.
    std::vector<double> done;
    std::function<void()> next = [&] {
      done.push_back(e.now());
      if (done.size() < 3) net.start(op, next);
    };
    net.start(op, next);
    e.run();
    REQUIRE(done.size() == 3);
    CHECK(done[0] == expect);
    for (std::size_t i = 1; i < done.size(); ++i)
      CHECK(done[i] - done[i - 1] == zerosim::testing::Approx(expect).epsilon(1e-12));
    CHECK(net.stats().flows ==
          3 * (is_nccl_collective(op) ? by_flows.stats_per_byte.flows : ref.stats().flows));
  }
}
