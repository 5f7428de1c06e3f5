// A context's analytic plans across scenarios (analytic_plan_cache.hpp, analytic_demand.hpp): the
// rate-independent loads are shared by fabrics that differ only in link rates (with the same
// capacity groups) and by nothing else;
// a plan applied to another rate's capacities equals the plain computation on that fabric bit for
// bit; demands are kept per fabric and profile, equal keys giving the same object and different
// NIC rates or profiles different ones.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "../collectives/collectives_fixture.hpp"
#include "sim/net/analytic_network.hpp"
#include "sim/step/simulate.hpp"
#include "tests/net/unit_plan_checks.hpp"

using namespace zerosim;
using test::check_same_plan;
using test::make_op;

namespace {

Topology dgx2(int nodes, double gbps, int nics = 1) {
  return test::dgx("dgx2-v100", nodes, nics, gbps);
}

// The ops of a ZeRO step's shapes: world ring, hierarchical, per-node and rail groups, the rail
// all-to-all (the shortcut) and the world all-to-all (by flows).
std::vector<CollectiveOp> shapes(const Topology& topo) {
  const auto world = world_group(topo);
  const auto nodes = intra_node_groups(topo, topo.gpus_per_node());
  const auto rails = rail_groups(topo);
  return {make_op(CollKind::AllGather, Algorithm::Ring, world, 1),
          make_op(CollKind::ReduceScatter, Algorithm::Hierarchical, world, 1),
          make_op(CollKind::AllReduce, Algorithm::Ring, rails, 1),
          make_op(CollKind::AllGather, Algorithm::IntraNode, nodes, 1),
          make_op(CollKind::AllToAll, Algorithm::Direct, rails, 1),
          make_op(CollKind::AllToAll, Algorithm::Direct, world, 1)};
}

}  // namespace

TEST_CASE("NIC rates share their loads; each rate's plan is the plain computation's") {
  const Topology slow = dgx2(4, 25), fast = dgx2(4, 400), other = dgx2(5, 25),
                 two_nics = dgx2(4, 25, 2);
  const CostProfile prof = select_cost_profile("", slow);
  CostProfile later = prof;  // another hop latency: other phase latencies, other loads' key
  later.link_classes[LinkClass::Network].hop_latency_s *= 2;
  FabricPlanCache cache;
  const auto p_slow = cache.get(slow, prof), p_fast = cache.get(fast, prof);
  CHECK(p_slow != p_fast);
  CHECK(p_slow->loads() == p_fast->loads());
  CHECK(cache.get(other, prof)->loads() != p_slow->loads());
  CHECK(cache.get(two_nics, prof)->loads() != p_slow->loads());
  CHECK(cache.get(slow, later)->loads() != p_slow->loads());
  // A class efficiency scales capacities only: the same loads, other plans.
  CostProfile derated = prof;
  derated.link_classes[LinkClass::Network].efficiency *= 0.5;
  CHECK(cache.get(slow, derated) != p_slow);
  CHECK(cache.get(slow, derated)->loads() == p_slow->loads());

  for (const CollectiveOp& op : shapes(slow)) {
    const std::string kind = to_string(op.kind), algorithm = to_string(op.algorithm);
    CAPTURE(kind);
    CAPTURE(algorithm);
    // The slow fabric lowers and routes; the fast one only applies its capacities.
    const UnitPlan a = p_slow->get(op, slow, prof), b = p_fast->get(op, fast, prof);
    const UnitPlan c = cache.get(slow, derated)->get(op, slow, derated);
    check_same_plan(a, unit_plan(op, slow, prof, link_capacities(slow, prof)));
    check_same_plan(b, unit_plan(op, fast, prof, link_capacities(fast, prof)));
    check_same_plan(c, unit_plan(op, slow, derated, link_capacities(slow, derated)));
    // The rate is in the plan: a shape across nodes is faster on the faster NICs.
    if (op.algorithm != Algorithm::IntraNode) CHECK(b.time_s(1 << 30) < a.time_s(1 << 30));
  }
}

TEST_CASE("loads are shared only by fabrics with the same capacity groups") {
  // 8 DGX H100 nodes on a fat-tree: two leaves of 32 NICs, two spines, so an uplink carries
  // 32 x 50 GB/s / 2 / oversubscription: at 16:1 the NICs' 50 GB/s (one capacity group with the
  // NIC links), at 2:1 400 GB/s (a group of their own); otherwise the graphs are alike. Each
  // fabric's plans are its own computation.
  const Topology one = test::dgx("dgx-h100", 8, -1, 400, "fat-tree", 16),
                 two = test::dgx("dgx-h100", 8, -1, 400, "fat-tree", 2),
                 two_fast = test::dgx("dgx-h100", 8, -1, 800, "fat-tree", 2);
  CHECK(capacity_groups(one) != capacity_groups(two));
  CHECK(capacity_groups(two) == capacity_groups(two_fast));
  const CostProfile prof = select_cost_profile("", one);
  FabricPlanCache cache;
  CHECK(cache.get(one, prof)->loads() != cache.get(two, prof)->loads());
  CHECK(cache.get(two, prof)->loads() == cache.get(two_fast, prof)->loads());
  for (const CollectiveOp& op : shapes(one))
    for (const Topology* t : {&one, &two, &two_fast}) {
      const std::string kind = to_string(op.kind), algorithm = to_string(op.algorithm);
      CAPTURE(kind);
      CAPTURE(algorithm);
      check_same_plan(cache.get(*t, prof)->get(op, *t, prof),
                      unit_plan(op, *t, prof, link_capacities(*t, prof)));
    }
}

TEST_CASE("demands are kept per fabric and profile: equal keys share them, other rates do not") {
  const Topology slow = dgx2(4, 25), fast = dgx2(4, 400), slow_again = dgx2(4, 25);
  const CostProfile prof = select_cost_profile("", slow);
  const CostProfile same = select_cost_profile("", slow_again);  // equal by value, another object
  CostProfile tuned = prof;  // outside the plans' key: the same plans, other NCCL choices
  tuned.nccl.ll128_efficiency *= 0.5;
  FabricPlanCache cache;
  const CollectiveOp ag =
      make_op(CollKind::AllGather, Algorithm::Auto, world_group(slow), 64.0 * (1 << 20));
  const auto demand = [&](const Topology& t, const CostProfile& p) {
    Engine e;
    AnalyticNetwork net(e, t, p, false, cache.get(t, p));
    return &net.op_demand(ag);
  };
  const AnalyticDemand* d = demand(slow, prof);
  CHECK(demand(slow, prof) == d);        // a later network finds it
  CHECK(demand(slow_again, same) == d);  // a rebuilt cluster, an equal profile
  CHECK(cache.get(slow, tuned) == cache.get(slow, prof));
  CHECK(cache.get(slow, tuned)->demands(tuned) != cache.get(slow, prof)->demands(prof));
  const AnalyticDemand* f = demand(fast, prof);
  CHECK(f != d);
  CHECK(f->time_s < d->time_s);  // 400 against 25 Gbit/s

  // Each equals a network's own computation (fresh plans, nothing shared), bit for bit.
  for (const auto& kv : {std::pair{&slow, d}, std::pair{&fast, f}}) {
    const Topology* t = kv.first;
    const AnalyticDemand* got = kv.second;
    Engine e;
    AnalyticNetwork own(e, *t, prof);
    const AnalyticDemand& ref = own.op_demand(ag);
    CHECK(got->time_s == ref.time_s);
    CHECK(got->stats.inter_node_bytes == ref.stats.inter_node_bytes);
    CHECK(got->stats.flows == ref.stats.flows);
    REQUIRE(got->segments.size() == ref.segments.size());
    for (std::size_t i = 0; i < ref.segments.size(); ++i) {
      CHECK(got->segments[i].latency_s == ref.segments[i].latency_s);
      CHECK(got->segments[i].work_s == ref.segments[i].work_s);
    }
  }
}

TEST_CASE("a full demand cache is replaced for the next network; its holders keep theirs") {
  const Topology topo = dgx2(2, 100);
  const CostProfile prof = select_cost_profile("", topo);
  FabricPlans plans;
  const std::shared_ptr<DemandCache> first = plans.demands(prof);
  CollectiveOp op = make_op(CollKind::AllGather, Algorithm::Ring, world_group(topo), 1);
  for (std::size_t i = 0; i < FabricPlans::kMaxDemands; ++i) {
    op.bytes = static_cast<double>(i + 1);
    first->insert(op, AnalyticDemand{static_cast<double>(i), {}, {}});
  }
  CHECK(first->size() == FabricPlans::kMaxDemands);
  const std::shared_ptr<DemandCache> next = plans.demands(prof);
  CHECK(next != first);
  CHECK(next->size() == 0);
  CHECK(plans.demands(prof) == next);
  REQUIRE(first->find(op) != nullptr);
  CHECK(first->find(op)->time_s == static_cast<double>(FabricPlans::kMaxDemands - 1));
  // An equal op inserted again keeps the first demand (live jobs point at it).
  const AnalyticDemand& kept = *first->find(op);
  CHECK(&first->insert(op, AnalyticDemand{-1, {}, {}}) == &kept);
  CHECK(kept.time_s == static_cast<double>(FabricPlans::kMaxDemands - 1));
}
