// The analytic tier's sharing between concurrent collectives, against closed forms (processor
// sharing per link class) and against the flow tier (max-min fair flows) on the same ops.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/net/analytic_network.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

Topology cluster(const std::string& type, int nodes, int nics) {
  ClusterSpec s;
  s.name = "share";
  s.node_type = type;
  s.nodes = nodes;
  s.nics_per_node = nics;
  return build_cluster(s);
}

CostProfile profile(const std::string& type) {
  return load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/" + type +
                           ".json");
}

CollectiveOp op(CollKind kind, const GroupList& groups, double bytes) {
  CollectiveOp o;
  o.kind = kind;
  o.algorithm = Algorithm::Auto;
  o.groups = groups;
  o.bytes = bytes;
  return o;
}

// Completion times of ops started at the given times on one tier.
std::vector<double> run(NetworkTier tier, const Topology& topo, const CostProfile& prof,
                        const std::vector<CollectiveOp>& ops, const std::vector<double>& at) {
  Engine e;
  auto net = make_network_model(tier, e, topo, prof);
  std::vector<double> done(ops.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i)
    e.schedule_at(at[i], [&, i] { net->start(ops[i], [&, i] { done[i] = e.now(); }); });
  e.run();
  return done;
}

}  // namespace

TEST_CASE("two equal collectives on the same links: each at half rate, both end at L + 2T") {
  const Topology topo = cluster("dgx2-v100", 4, 1);
  const CostProfile prof = profile("dgx2-v100");
  const CollectiveOp ag = op(CollKind::AllGather, world_group(topo), 256.0 * (1 << 20));
  Engine e;
  AnalyticNetwork alone(e, topo, prof);
  const AnalyticNetwork::Demand d = alone.op_demand(ag);
  REQUIRE(d.segments.size() == 1);
  const double L = d.segments[0].latency_s, T = d.time_s - L;
  CHECK(T > 10 * L);
  const std::vector<double> t = run(NetworkTier::Analytic, topo, prof, {ag, ag}, {0, 0});
  CHECK(t[0] == Approx(L + 2 * T).epsilon(1e-9));
  CHECK(t[1] == Approx(L + 2 * T).epsilon(1e-9));
}

TEST_CASE("a small and a large collective: the small ends at L + 2Ts, the large at L + Ts + Tl") {
  const Topology topo = cluster("dgx-h100", 4, 1);
  const CostProfile prof = profile("dgx-h100");
  const CollectiveOp rs = op(CollKind::ReduceScatter, world_group(topo), 128.0 * (1 << 20));
  const CollectiveOp ag = op(CollKind::AllGather, world_group(topo), 512.0 * (1 << 20));
  Engine e;
  AnalyticNetwork alone(e, topo, prof);
  const auto ds = alone.op_demand(rs), dl = alone.op_demand(ag);
  // Both transfers are limited by the same class (the one NIC per node).
  const auto net = static_cast<std::size_t>(LinkClass::Network);
  const double Ls = ds.segments[0].latency_s, Ts = ds.time_s - Ls;
  const double Ll = dl.segments[0].latency_s, Tl = dl.time_s - Ll;
  REQUIRE(ds.segments[0].work_s[net] == Approx(Ts).epsilon(1e-12));
  REQUIRE(dl.segments[0].work_s[net] == Approx(Tl).epsilon(1e-12));
  // Started so that both transfers begin at B; on the shared network class each runs at 1/2
  // until the small one ends.
  const double B = std::max(Ls, Ll);
  const std::vector<double> t = run(NetworkTier::Analytic, topo, prof, {rs, ag}, {B - Ls, B - Ll});
  CHECK(t[0] == Approx(B + 2 * Ts).epsilon(1e-9));
  CHECK(t[1] == Approx(B + Ts + Tl).epsilon(1e-9));
}

TEST_CASE("collectives on different link classes do not slow each other") {
  const Topology topo = cluster("dgx-h100", 2, 8);
  const CostProfile prof = profile("dgx-h100");
  // Per-node all-gathers (NVLink only) beside a rail all-to-all (one GPU per node, NIC links).
  const CollectiveOp intra = op(CollKind::AllGather, intra_node_groups(topo, 8), 64.0 * (1 << 20));
  const CollectiveOp rail = op(CollKind::AllToAll, rail_groups(topo), 64.0 * (1 << 20));
  Engine e;
  AnalyticNetwork alone(e, topo, prof);
  const auto di = alone.op_demand(intra), dr = alone.op_demand(rail);
  const auto cls = [](const AnalyticNetwork::Demand& d, LinkClass c) {
    return d.segments[0].work_s[static_cast<std::size_t>(c)];
  };
  REQUIRE(cls(di, LinkClass::Network) == 0);
  REQUIRE(cls(dr, LinkClass::NvLink) == 0);
  if (cls(di, LinkClass::Pcie) == 0 || cls(dr, LinkClass::Pcie) == 0) {
    const std::vector<double> t = run(NetworkTier::Analytic, topo, prof, {intra, rail}, {0, 0});
    CHECK(t[0] == Approx(di.time_s).epsilon(1e-12));
    CHECK(t[1] == Approx(dr.time_s).epsilon(1e-12));
  }
}

TEST_CASE("concurrent ring collectives, staggered: the analytic tier within 1% of the flow tier") {
  for (const char* type : {"dgx2-v100", "dgx-h100", "dgx-a100"})
    for (int nics : {1, 4}) {
      CAPTURE(type);
      CAPTURE(nics);
      const Topology topo = cluster(type, 4, nics);
      const CostProfile prof = profile(type);
      const GroupList w = world_group(topo);
      const std::vector<CollectiveOp> ops = {op(CollKind::AllGather, w, 300.0 * (1 << 20)),
                                             op(CollKind::ReduceScatter, w, 200.0 * (1 << 20)),
                                             op(CollKind::AllGather, w, 100.0 * (1 << 20))};
      const std::vector<double> at = {0, 1e-3, 2.5e-3};
      const std::vector<double> flow = run(NetworkTier::Flow, topo, prof, ops, at);
      const std::vector<double> analytic = run(NetworkTier::Analytic, topo, prof, ops, at);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        CAPTURE(i);
        CHECK(analytic[i] == Approx(flow[i]).epsilon(0.01));
      }
    }
}

TEST_CASE("ops found by their class's slot cost what the per-op cache gives, wrong classes too") {
  // expect_classes only says where to look: an op whose class slot holds another op's demand
  // (another size, kind or group list) is found by the per-op cache instead.
  const Topology topo = cluster("dgx2-v100", 4, 1);
  const CostProfile prof = profile("dgx2-v100");
  const GroupList world = world_group(topo);
  const GroupList nodes = intra_node_groups(topo, topo.gpus_per_node());
  const CollectiveOp ag = op(CollKind::AllGather, world, 64.0 * (1 << 20));
  const std::vector<CollectiveOp> ops = {ag,
                                         ag,
                                         op(CollKind::ReduceScatter, world, 32.0 * (1 << 20)),
                                         ag,
                                         op(CollKind::AllGather, world, 128.0 * (1 << 20)),
                                         op(CollKind::AllGather, nodes, 1 << 20)};
  const std::vector<double> at = {0, 1e-4, 2e-4, 5e-3, 5e-3, 6e-3};
  const auto run_with = [&](const std::vector<int>* classes, int count) {
    Engine e;
    AnalyticNetwork net(e, topo, prof);
    e.add_model(&net);
    net.expect_ops(ops);
    if (classes) net.expect_classes(*classes, count);
    std::vector<double> done(ops.size(), -1);
    for (std::size_t i = 0; i < ops.size(); ++i)
      e.schedule_at(at[i], [&, i] { net.start(ops[i], [&, i] { done[i] = e.now(); }); });
    e.run();
    return std::pair{done, net.stats()};
  };
  const auto plain = run_with(nullptr, 0);
  const std::vector<int> right = {0, 0, 1, 0, 2, 3}, wrong = {0, 0, 0, 0, 0, 0},
                         outside = {0, 7, -1, 0, 1, 1};
  for (const auto* classes : {&right, &wrong, &outside}) {
    const auto got = run_with(classes, 4);
    CHECK(got.first == plain.first);  // bit for bit
    CHECK(got.second.inter_node_bytes == plain.second.inter_node_bytes);
    CHECK(got.second.intra_node_bytes == plain.second.intra_node_bytes);
    CHECK(got.second.flows == plain.second.flows);
  }
  for (const double t : plain.first) CHECK(t > 0);
}
