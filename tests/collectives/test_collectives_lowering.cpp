// Lowered plans against closed forms: flow counts, bytes per flow, bytes crossing nodes, latency.
// S is the op size in nccl-tests' convention, n ranks, N GPUs per node, Y nodes, C NICs per node.
#include <doctest/doctest.h>

#include <set>

#include "sim/core/error.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using test::make_op;
using zerosim::testing::Approx;

namespace {

int nic_of_route(const Topology& topo, int src, int dst) {
  for (LinkId id : topo.route(src, dst).links) {
    const VertexInfo& v = topo.vertex(topo.link(id).to);
    if (v.kind == NodeKind::Nic) return v.node * 1000 + v.local;
  }
  return -1;
}

constexpr double S = 1 << 30;

}  // namespace

TEST_CASE("ring all-gather inside one NVSwitch node: n flows of (n-1)/n*S, (n-1) NVLink alphas") {
  const Topology topo = test::dgx("dgx-h100", 1);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const auto op = make_op(CollKind::AllGather, Algorithm::Auto, world_group(topo), S);
  CHECK(select_algorithm(op, topo) == Algorithm::IntraNode);
  const CollectivePlan plan = lower_collective(op, topo, prof);
  REQUIRE(plan.phases.size() == 1);
  const Phase& ph = plan.phases[0];
  REQUIRE(ph.flows.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(ph.flows[i].src_gpu == static_cast<int>(i));
    CHECK(ph.flows[i].dst_gpu == static_cast<int>((i + 1) % 8));
    CHECK(ph.flows[i].bytes == Approx(7.0 / 8 * S));
  }
  // NCCL's Ring/Simple latency: the call, the base and 7 NVLink steps (not the routes' wire time).
  CHECK(ph.latency_s == Approx(test::ring_simple_latency(prof, CollKind::AllGather, 8, 1)));
  CHECK(prof.link_class(LinkClass::NvLink).hop_latency_s > 0);
}

TEST_CASE("ring all-reduce doubles bytes per edge and the number of latency steps") {
  const Topology topo = test::dgx("dgx-h100", 1);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const auto plan = lower_collective(
      make_op(CollKind::AllReduce, Algorithm::Ring, world_group(topo), S), topo, prof);
  REQUIRE(plan.phases.size() == 1);
  for (const Flow& f : plan.phases[0].flows) CHECK(f.bytes == Approx(2 * 7.0 / 8 * S));
  CHECK(plan.phases[0].latency_s ==
        Approx(test::ring_simple_latency(prof, CollKind::AllReduce, 8, 1)));
}

TEST_CASE("multi-node ring uses one channel per NIC, so every NIC carries (n-1)/n*S/C") {
  const int Y = 4;
  const Topology topo = test::dgx("dgx-h100", Y);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int N = topo.gpus_per_node(), C = topo.nics_per_node(), n = N * Y;
  REQUIRE(C == 8);
  const auto op = make_op(CollKind::AllGather, Algorithm::Auto, world_group(topo), S);
  CHECK(select_algorithm(op, topo) == Algorithm::Ring);
  const CollectivePlan plan = lower_collective(op, topo, prof);
  REQUIRE(plan.phases.size() == 1);
  const double edge = (n - 1.0) / n * S;
  std::set<int> nics_out;
  std::size_t network_flows = 0;
  for (const Flow& f : plan.phases[0].flows) {
    if (topo.node_of(f.src_gpu) != topo.node_of(f.dst_gpu)) {
      ++network_flows;
      CHECK(f.bytes == Approx(edge / C));
      CHECK(topo.local_of(f.src_gpu) == topo.local_of(f.dst_gpu));  // same rail
      CHECK(topo.node_of(f.dst_gpu) == (topo.node_of(f.src_gpu) + 1) % Y);
      CHECK(nics_out.insert(nic_of_route(topo, f.src_gpu, f.dst_gpu)).second);  // one flow per NIC
    } else {
      CHECK(f.bytes == Approx(edge));  // the C channels' NVLink loops share each in-node edge
    }
  }
  CHECK(network_flows == static_cast<std::size_t>(C * Y));
  CHECK(nics_out.size() == static_cast<std::size_t>(C * Y));
  CHECK(plan.phases[0].flows.size() == static_cast<std::size_t>(C * Y + N * Y));
  // Network bytes per node = (n-1)/n*S, as every ring edge carries.
  CHECK(test::count_bytes(plan, topo).inter_node == Approx(Y * edge));
  // NCCL's ring latency: (n-1) steps, (Y-1) of them over the network.
  CHECK(plan.phases[0].latency_s ==
        Approx(test::ring_simple_latency(prof, CollKind::AllGather, n, Y)));
}

TEST_CASE("hierarchical all-gather, reduce-scatter and all-reduce: stages and sizes") {
  const int Y = 2;
  const Topology topo = test::dgx("dgx-h100", Y);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int N = topo.gpus_per_node();

  SUBCASE("all_gather: rails gather S/N, then nodes gather S") {
    const auto plan = lower_collective(
        make_op(CollKind::AllGather, Algorithm::Hierarchical, world_group(topo), S), topo, prof);
    REQUIRE(plan.phases.size() == 2);
    CHECK(plan.phases[0].flows.size() == static_cast<std::size_t>(N * Y));
    for (const Flow& f : plan.phases[0].flows) {
      CHECK(topo.local_of(f.src_gpu) == topo.local_of(f.dst_gpu));
      CHECK(f.bytes == Approx((Y - 1.0) / Y * S / N));
    }
    CHECK(plan.phases[1].flows.size() == static_cast<std::size_t>(N * Y));
    for (const Flow& f : plan.phases[1].flows) {
      CHECK(topo.node_of(f.src_gpu) == topo.node_of(f.dst_gpu));
      CHECK(f.bytes == Approx((N - 1.0) / N * S));
    }
    // Network bytes per node: (Y-1)/Y*S, the data of the other nodes, exactly once.
    CHECK(test::count_bytes(plan, topo).inter_node == Approx(Y * (Y - 1.0) / Y * S));
    CHECK(plan.phases[0].latency_s ==
          Approx(test::ring_simple_latency(prof, CollKind::AllGather, Y, Y)));
    CHECK(plan.phases[1].latency_s ==
          Approx(test::ring_simple_latency(prof, CollKind::AllGather, N, 1)));
  }
  SUBCASE("reduce_scatter: nodes first, then rails") {
    const auto plan = lower_collective(
        make_op(CollKind::ReduceScatter, Algorithm::Hierarchical, world_group(topo), S), topo,
        prof);
    REQUIRE(plan.phases.size() == 2);
    CHECK(test::count_bytes(CollectivePlan{{plan.phases[0]}}, topo).inter_node == 0);
    CHECK(plan.phases[0].flows[0].bytes == Approx((N - 1.0) / N * S));
    CHECK(test::count_bytes(CollectivePlan{{plan.phases[1]}}, topo).intra_node == 0);
    CHECK(plan.phases[1].flows[0].bytes == Approx((Y - 1.0) / Y * S / N));
  }
  SUBCASE("all_reduce: node reduce-scatter, rail all-reduce of S/N, node all-gather") {
    const auto plan = lower_collective(
        make_op(CollKind::AllReduce, Algorithm::Hierarchical, world_group(topo), S), topo, prof);
    REQUIRE(plan.phases.size() == 3);
    CHECK(plan.phases[0].flows[0].bytes == Approx((N - 1.0) / N * S));
    CHECK(plan.phases[1].flows[0].bytes == Approx(2 * (Y - 1.0) / Y * S / N));
    CHECK(plan.phases[2].flows[0].bytes == Approx((N - 1.0) / N * S));
    CHECK(plan.phases[1].latency_s ==
          Approx(test::ring_simple_latency(prof, CollKind::AllReduce, Y, Y)));
  }
}

TEST_CASE("direct all-to-all: every ordered pair gets S/n, cross-rail pairs relayed as PXN does") {
  const int Y = 2;
  const Topology topo = test::dgx("dgx-h100", Y);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int N = topo.gpus_per_node(), n = N * Y;
  const auto op = make_op(CollKind::AllToAll, Algorithm::Auto, world_group(topo), S);
  CHECK(select_algorithm(op, topo) == Algorithm::Direct);
  const auto plan = lower_collective(op, topo, prof);
  REQUIRE(plan.phases.size() == 1);
  // On the rail fabric a pair (node a, local i) -> (node b, local j != i) goes over NVLink to
  // (a, j), then along rail j: the network sees one flow per (GPU, remote node) carrying the N
  // pieces bound for the same-rail GPU there, N*S/n; NVLink flows merge the local pieces and
  // relays.
  CHECK(plan.phases[0].flows.size() == static_cast<std::size_t>(n * (N - 1) + n * (Y - 1)));
  for (const Flow& f : plan.phases[0].flows) {
    if (topo.node_of(f.src_gpu) == topo.node_of(f.dst_gpu)) continue;
    CHECK(topo.local_of(f.src_gpu) == topo.local_of(f.dst_gpu));
    CHECK(f.bytes == Approx(N * S / n));
  }
  const auto bytes = test::count_bytes(plan, topo);
  CHECK(bytes.inter_node == Approx(n * (n - N) * S / n));
  CHECK(bytes.intra_node == Approx(n * (N - 1) * S / n + n * (Y - 1) * (N - 1) * S / n));
  CHECK(plan.phases[0].latency_s >= test::step_alpha(topo, prof, 0, N));
}

TEST_CASE("direct all-to-all on a single-leaf fat-tree needs no relay") {
  const Topology topo = test::dgx("dgx-h100", 2, 8, 400, "fat-tree");
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int n = topo.gpu_count();
  const auto plan = lower_collective(
      make_op(CollKind::AllToAll, Algorithm::Direct, world_group(topo), S), topo, prof);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].flows.size() == static_cast<std::size_t>(n * (n - 1)));
  for (const Flow& f : plan.phases[0].flows) CHECK(f.bytes == Approx(S / n));
}

TEST_CASE("two-hop all-to-all sends 1/N of a direct all-to-all's bytes across nodes (qgZ)") {
  const int Y = 4;
  const Topology topo = test::dgx("dgx-h100", Y);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int N = topo.gpus_per_node(), n = N * Y;
  const auto two_hop = lower_collective(
      make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(topo), S), topo, prof);
  const auto direct = lower_collective(
      make_op(CollKind::AllToAll, Algorithm::Direct, world_group(topo), S), topo, prof);
  REQUIRE(two_hop.phases.size() == 2);
  // Hop 1: each GPU sends (N-1)/N of its buffer over NVLink.
  CHECK(two_hop.phases[0].flows.size() == static_cast<std::size_t>(Y * N * (N - 1)));
  const auto hop1 = test::count_bytes(CollectivePlan{{two_hop.phases[0]}}, topo);
  CHECK(hop1.inter_node == 0);
  CHECK(hop1.intra_node == Approx(n * (N - 1.0) / N * S));
  // Hop 2: each GPU sends (1/N)(Y-1)/Y of its buffer to its rail peers.
  CHECK(two_hop.phases[1].flows.size() == static_cast<std::size_t>(N * Y * (Y - 1)));
  const auto hop2 = test::count_bytes(CollectivePlan{{two_hop.phases[1]}}, topo);
  CHECK(hop2.intra_node == 0);
  CHECK(hop2.inter_node == Approx(n * (1.0 / N) * (Y - 1.0) / Y * S));
  CHECK(hop2.inter_node == Approx(test::count_bytes(direct, topo).inter_node / N));
}

TEST_CASE("send_recv: one flow per [src, dst] pair; cross-rail pairs relay over NVLink") {
  const Topology topo = test::dgx("dgx-h100", 2);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const auto plan = lower_collective(
      make_op(CollKind::SendRecv, Algorithm::Auto, {{0, 8}, {8, 0}}, S), topo, prof);
  REQUIRE(plan.phases.size() == 1);
  REQUIRE(plan.phases[0].flows.size() == 2);
  CHECK(plan.phases[0].flows[0].src_gpu == 0);
  CHECK(plan.phases[0].flows[0].dst_gpu == 8);
  CHECK(plan.phases[0].flows[0].bytes == S);
  CHECK(plan.phases[0].latency_s ==
        Approx(test::p2p_latency(prof, test::step_alpha(topo, prof, 0, 8), 0, 1)));

  // GPU 7 (rail 7) to GPU 8 (node 1, rail 0): NVLink to GPU 0, then rail 0.
  const auto pxn =
      lower_collective(make_op(CollKind::SendRecv, Algorithm::Auto, {{7, 8}}, S), topo, prof);
  REQUIRE(pxn.phases.size() == 1);
  REQUIRE(pxn.phases[0].flows.size() == 2);
  CHECK(pxn.phases[0].flows[0].src_gpu == 7);
  CHECK(pxn.phases[0].flows[0].dst_gpu == 0);
  CHECK(pxn.phases[0].flows[1].src_gpu == 0);
  CHECK(pxn.phases[0].flows[1].dst_gpu == 8);
  CHECK(pxn.phases[0].flows[1].bytes == S);
  CHECK(pxn.phases[0].latency_s ==
        Approx(test::p2p_latency(
            prof, test::step_alpha(topo, prof, 7, 0) + test::step_alpha(topo, prof, 0, 8), 0, 1)));
}

TEST_CASE("grouped send/recv pays p2p_peer per peer on the node, p2p_net_peer per network peer") {
  // all_to_all over 2 nodes x 8 GPUs: every rank has 7 peers on its node and 8 across the
  // network; a send_recv inside a node has one node peer, across nodes one network peer.
  const Topology topo = test::dgx("dgx-h100", 2);
  CostProfile base = test::shipped_profile("dgx-h100");
  base.nccl.p2p_peer_s = 1e-6;
  base.nccl.p2p_net_peer_s = 1e-6;
  CostProfile net = base, node = base;
  net.nccl.p2p_net_peer_s = 11e-6;
  node.nccl.p2p_peer_s = 3e-6;
  std::vector<int> all(16);
  for (int g = 0; g < 16; ++g) all[static_cast<std::size_t>(g)] = g;
  const auto latency = [&](const CostProfile& p, CollKind kind,
                           std::vector<std::vector<int>> groups) {
    return lower_collective(make_op(kind, Algorithm::Auto, std::move(groups), S), topo, p)
        .phases[0]
        .latency_s;
  };
  const double a2a = latency(base, CollKind::AllToAll, {all});
  CHECK(latency(net, CollKind::AllToAll, {all}) - a2a == Approx(8 * 10e-6));
  CHECK(latency(node, CollKind::AllToAll, {all}) - a2a == Approx(7 * 2e-6));
  const double inside = latency(base, CollKind::SendRecv, {{0, 1}});
  CHECK(latency(net, CollKind::SendRecv, {{0, 1}}) == Approx(inside));
  CHECK(latency(node, CollKind::SendRecv, {{0, 1}}) - inside == Approx(2e-6));
  const double across = latency(base, CollKind::SendRecv, {{0, 8}});
  CHECK(latency(net, CollKind::SendRecv, {{0, 8}}) - across == Approx(10e-6));
  CHECK(latency(node, CollKind::SendRecv, {{0, 8}}) == Approx(across));
}

TEST_CASE("concurrent groups share one phase; a group of one rank moves nothing") {
  const Topology topo = test::dgx("dgx-h100", 2);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const auto per_node = intra_node_groups(topo, 8);
  const auto plan =
      lower_collective(make_op(CollKind::ReduceScatter, Algorithm::Auto, per_node, S), topo, prof);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].flows.size() == 16);
  CHECK(test::count_bytes(plan, topo).inter_node == 0);
  const auto single =
      lower_collective(make_op(CollKind::AllGather, Algorithm::Auto, {{3}}, S), topo, prof);
  CHECK(single.phases.empty());
}

TEST_CASE("bad groups and incompatible algorithms are input errors") {
  const Topology topo = test::dgx("dgx-h100", 2);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  auto expect_error = [&](const CollectiveOp& op, const std::string& path) {
    CAPTURE(path);
    CHECK(caught_input_error([&] { lower_collective(op, topo, prof); }).path() == path);
  };
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {}, S), "/groups");
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1}, {}}, S), "/groups/1");
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1, 1}}, S), "/groups/0/2");
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 16}}, S), "/groups/0/1");
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {{0, -1}}, S), "/groups/0/1");
  // Each group is checked on its own: a rank in two groups is no duplicate, one twice in a later
  // group is (named by its group and position, with the rank).
  CHECK_NOTHROW(lower_collective(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1}, {1, 0}}, S),
                                 topo, prof));
  const InputError twice = caught_input_error([&] {
    lower_collective(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1}, {2, 9, 2}}, S), topo,
                     prof);
  });
  CHECK(twice.path() == "/groups/1/2");
  CHECK(twice.rule() == "rank 2 appears twice in the group");
  expect_error(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1}}, 0), "/bytes");
  expect_error(make_op(CollKind::SendRecv, Algorithm::Auto, {{0, 1, 2}}, S), "/groups/0");
  expect_error(make_op(CollKind::AllGather, Algorithm::Direct, {{0, 1}}, S), "/algorithm");
  expect_error(make_op(CollKind::AllToAll, Algorithm::Ring, {{0, 1}}, S), "/algorithm");
  expect_error(make_op(CollKind::AllGather, Algorithm::IntraNode, {{0, 8}}, S), "/algorithm");
  expect_error(make_op(CollKind::SendRecv, Algorithm::Ring, {{0, 8}}, S), "/algorithm");
  // Hierarchical needs the same local GPUs in every node.
  expect_error(make_op(CollKind::AllGather, Algorithm::Hierarchical, {{0, 1, 8}}, S), "/algorithm");
}
