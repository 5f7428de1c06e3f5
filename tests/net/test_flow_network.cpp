// Flow tier on hand-built plans over a one-node DGX H100 (8 GPUs on one NVSwitch vertex: a route
// GPU a -> GPU b is uplink(a) then downlink(b), each 450 GB/s x the profile's NVLink efficiency),
// with closed-form completion times.
#include <doctest/doctest.h>

#include <string>

#include "sim/core/error.hpp"
#include "sim/net/analytic_network.hpp"
#include "sim/net/flow_network.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

Topology h100(int nodes) {
  ClusterSpec s;
  s.name = "net-test";
  s.node_type = "dgx-h100";
  s.nodes = nodes;
  return build_cluster(s);
}

CostProfile profile() {
  return load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/dgx-h100.json");
}

CollectivePlan plan(std::vector<Phase> phases) { return CollectivePlan{std::move(phases)}; }

}  // namespace

TEST_CASE("two collectives into one GPU share its downlink, then the survivor speeds up") {
  // Flows 0->2 (a bytes) and 1->2 (b = 3a bytes) share link nvswitch->gpu2 of capacity C: each gets
  // C/2. The small one ends at 2a/C; the large one then runs alone and ends at (a + b)/C.
  const Topology topo = h100(1);
  const CostProfile prof = profile();
  const double C = 450e9 * prof.link_class(LinkClass::NvLink).efficiency;
  const double a = 1e9, b = 3e9;
  Engine e;
  FlowNetwork net(e, topo, prof);
  e.add_model(&net);
  double ta = -1, tb = -1;
  net.start_plan(plan({Phase{0, {Flow{0, 2, a}}}}), [&] { ta = e.now(); });
  net.start_plan(plan({Phase{0, {Flow{1, 2, b}}}}), [&] { tb = e.now(); });
  e.run();
  CHECK(ta == Approx(2 * a / C).epsilon(1e-12));
  CHECK(tb == Approx((a + b) / C).epsilon(1e-12));
}

TEST_CASE("a flow that joins later: rates are recomputed where the flow set changed") {
  // X: 0->2 with 3 C tau bytes from t = 0. Y: 1->2 with C tau bytes from t = tau. X moves C tau
  // alone, then both move at C/2: Y ends at tau + 2 tau = 3 tau, X has C tau left and ends at 4
  // tau.
  const Topology topo = h100(1);
  const CostProfile prof = profile();
  const double C = 450e9 * prof.link_class(LinkClass::NvLink).efficiency, tau = 1e-3;
  Engine e;
  FlowNetwork net(e, topo, prof);
  e.add_model(&net);
  double tx = -1, ty = -1;
  net.start_plan(plan({Phase{0, {Flow{0, 2, 3 * C * tau}}}}), [&] { tx = e.now(); });
  e.schedule_at(tau, [&] {
    net.start_plan(plan({Phase{0, {Flow{1, 2, C * tau}}}}), [&] { ty = e.now(); });
  });
  e.run();
  CHECK(ty == Approx(3 * tau).epsilon(1e-12));
  CHECK(tx == Approx(4 * tau).epsilon(1e-12));
}

TEST_CASE("phases run in order, each after its latency") {
  // Phase 0: latency 5 us, 0->1 with a bytes; phase 1: latency 7 us, 1->0 with b bytes.
  // Time = 5e-6 + a/C + 7e-6 + b/C.
  const Topology topo = h100(1);
  const CostProfile prof = profile();
  const double C = 450e9 * prof.link_class(LinkClass::NvLink).efficiency;
  const double a = 2e8, b = 5e8;
  Engine e;
  FlowNetwork net(e, topo, prof);
  e.add_model(&net);
  double t = -1;
  net.start_plan(plan({Phase{5e-6, {Flow{0, 1, a}}}, Phase{7e-6, {Flow{1, 0, b}}}}),
                 [&] { t = e.now(); });
  e.run();
  CHECK(t == Approx(5e-6 + a / C + 7e-6 + b / C).epsilon(1e-12));
}

TEST_CASE("symmetric all-to-all inside a node completes in one model event") {
  // 8 GPUs, 56 flows of s bytes: every uplink and downlink carries 7 flows at C/7; all end at 7s/C.
  // Events: the phase start, one model step for all 56 completions, the on_done callback.
  const Topology topo = h100(1);
  const CostProfile prof = profile();
  const double C = 450e9 * prof.link_class(LinkClass::NvLink).efficiency, s = 1e8;
  Phase ph;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      if (i != j) ph.flows.push_back(Flow{i, j, s});
  Engine e;
  FlowNetwork net(e, topo, prof);
  e.add_model(&net);
  double t = -1;
  net.start_plan(plan({ph}), [&] { t = e.now(); });
  e.run();
  CHECK(t == Approx(7 * s / C).epsilon(1e-12));
  CHECK(e.events_processed() == 3);
  CHECK(net.active_flows() == 0);
  CHECK(net.stats().flows == 56);
}

TEST_CASE("stats split payload bytes by whether the route crosses nodes; self flows are free") {
  // 0->1 stays in node 0 (100 B), 0->8 crosses to node 1 (300 B), 3->3 is a local copy (ignored).
  const Topology topo = h100(2);
  const CostProfile prof = profile();
  for (const NetworkTier tier : {NetworkTier::Flow, NetworkTier::Analytic}) {
    const std::string_view name = choice_name(tier);
    CAPTURE(name);
    Engine e;
    auto net = make_network_model(tier, e, topo, prof);
    CHECK(net->name() == name);
    CollectivePlan p = plan({Phase{0, {Flow{0, 1, 100}, Flow{0, 8, 300}, Flow{3, 3, 50}}}});
    if (tier == NetworkTier::Flow) {
      static_cast<FlowNetwork&>(*net).start_plan(p, [] {});
    } else {
      static_cast<AnalyticNetwork&>(*net).plan_time(p);
    }
    e.run();
    CHECK(net->stats().intra_node_bytes == 100);
    CHECK(net->stats().inter_node_bytes == 300);
    CHECK(net->stats().flows == 2);
  }
}

TEST_CASE("analytic tier: busiest link per phase, phases add") {
  // Phase 0 (latency 1 us): 0->2 a and 1->2 a share downlink(2): 2a/C. Phase 1 (latency 2 us):
  // 0->1 and 2->3 on disjoint links, b each: b/C. Total 1e-6 + 2a/C + 2e-6 + b/C.
  const Topology topo = h100(1);
  const CostProfile prof = profile();
  const double C = 450e9 * prof.link_class(LinkClass::NvLink).efficiency, a = 1e8, b = 3e8;
  Engine e;
  AnalyticNetwork net(e, topo, prof);
  const double t = net.plan_time(plan(
      {Phase{1e-6, {Flow{0, 2, a}, Flow{1, 2, a}}}, Phase{2e-6, {Flow{0, 1, b}, Flow{2, 3, b}}}}));
  CHECK(t == Approx(1e-6 + 2 * a / C + 2e-6 + b / C).epsilon(1e-12));
}

TEST_CASE("the flow tier refuses an op too large to route, before lowering it") {
  // 725 DGX H100 nodes = 5800 GPUs: a world all-to-all routes 5800 x 5799 = 33,634,200 pairs in
  // one phase, just over the 2^25 = 33,554,432 limit; two_hop splits it into 725 x (8 x 7) and
  // 8 x (725 x 724) = 4,199,200; a ring has one flow per rank.
  const Topology topo = h100(725);
  const CostProfile prof = profile();
  CollectiveOp a2a;
  a2a.kind = CollKind::AllToAll;
  a2a.algorithm = Algorithm::Direct;
  a2a.groups = world_group(topo);
  a2a.bytes = 1 << 20;
  CHECK(max_phase_flows(a2a, topo) == 33634200);
  CollectiveOp two_hop = a2a;
  two_hop.algorithm = Algorithm::TwoHopAllToAll;
  CHECK(max_phase_flows(two_hop, topo) == 4199200);
  CollectiveOp ring = a2a;
  ring.kind = CollKind::AllGather;
  ring.algorithm = Algorithm::Ring;
  CHECK(max_phase_flows(ring, topo) == 5800);
  CHECK(FlowNetwork::kMaxPhaseFlows == 33554432);

  Engine e;
  FlowNetwork net(e, topo, prof);
  const auto err = caught_input_error([&] { net.start(a2a, [] {}); });
  CHECK(err.path() == "--tier");
  const std::string what = err.what();
  CHECK(what.find("33634200 flows") != std::string::npos);
  CHECK(what.find("--tier analytic") != std::string::npos);
  CHECK(net.cached_plans() == 0);  // refused before lowering
}
