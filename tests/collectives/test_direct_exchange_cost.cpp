// DirectExchangeCost against the analytic tier it stands for: the same all_to_all's time under
// profiles that move every value it reads (each class's efficiency and hop latency, the per-peer
// costs, p2p_efficiency, the small-message path), on a fat-tree (Polaris) and on a rail fabric
// whose cross-rail pairs relay through PXN (two hops).
#include <doctest/doctest.h>

#include <numeric>

#include "sim/collectives/direct_exchange_cost.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/analytic_network.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

CollectiveOp all_ranks(const Topology& topo, double bytes) {
  std::vector<int> all(static_cast<std::size_t>(topo.gpu_count()));
  std::iota(all.begin(), all.end(), 0);
  return test::make_op(CollKind::AllToAll, Algorithm::Auto, {all}, bytes);
}

// Profiles that each move what the cost reads, from `base`.
std::vector<CostProfile> variants(const CostProfile& base) {
  std::vector<CostProfile> out{base};
  CostProfile p = base;
  p.link_classes.at(LinkClass::Network).efficiency = 0.5;  // the network link busiest
  p.link_classes.at(LinkClass::NvLink).efficiency = 1.0;
  out.push_back(p);
  p = base;
  p.link_classes.at(LinkClass::NvLink).efficiency = 0.02;  // an NVLink busiest
  out.push_back(p);
  p = base;
  p.link_classes.at(LinkClass::Network).hop_latency_s = 41e-6;
  p.link_classes.at(LinkClass::NvLink).hop_latency_s = 7e-6;
  p.nccl.p2p_peer_s = 3e-6;
  p.nccl.p2p_net_peer_s = 0.25e-6;
  p.nccl.p2p_efficiency = 0.61;
  p.nccl.launch_s = 9e-6;
  out.push_back(p);
  p.nccl.p2p_small_bytes = 1 << 20;
  p.nccl.p2p_small_net_peer_s = 11e-6;
  out.push_back(p);
  return out;
}

void agrees_with_analytic_tier(const Topology& topo, const CostProfile& base) {
  const DirectExchangeCost cost(all_ranks(topo, 1), topo);
  for (const CostProfile& p : variants(base))
    for (double bytes : {1024.0, 1048576.0, 1073741824.0}) {
      Engine engine;
      AnalyticNetwork net(engine, topo, p, true);  // the reference computation, no shortcut
      const double expected = net.op_cost(all_ranks(topo, bytes)).first;
      INFO("bytes " << bytes << " network efficiency "
                    << p.link_classes.at(LinkClass::Network).efficiency);
      CHECK(cost.time_s(p, bytes) == Approx(expected).epsilon(1e-12));
    }
}

}  // namespace

TEST_CASE("a direct exchange's cost equals the analytic tier's time on a fat-tree (Polaris)") {
  const Topology topo = test::dgx("polaris-a100", 8, 2, 200, "fat-tree");
  agrees_with_analytic_tier(topo, test::shipped_profile("polaris-a100"));
}

TEST_CASE("a direct exchange's cost equals the analytic tier's time where pairs relay (PXN)") {
  const Topology topo = test::dgx("dgx-h100", 4);
  // The cost must see two-hop transfers (an NVLink hop, then the network) here, or the case tests
  // nothing more than the one above: with 1 ms per hop, only they take 2 ms.
  CostProfile slow_hops = test::shipped_profile("dgx-h100");
  slow_hops.link_classes.at(LinkClass::NvLink).hop_latency_s = 1e-3;
  slow_hops.link_classes.at(LinkClass::Network).hop_latency_s = 1e-3;
  const DirectExchangeCost cost(all_ranks(topo, 1), topo);
  CHECK(cost.time_s(slow_hops, 1) > 2e-3);
  agrees_with_analytic_tier(topo, test::shipped_profile("dgx-h100"));
}

TEST_CASE("a direct exchange's cost is of one all_to_all group on the direct algorithm") {
  const Topology topo = test::dgx("dgx-h100", 2);
  CHECK_THROWS_AS(DirectExchangeCost(test::make_op(CollKind::AllToAll, Algorithm::Auto,
                                                   {{0, 1, 8, 9}, {2, 3, 10, 11}}, 1),
                                     topo),
                  InputError);
  CHECK_THROWS_AS(DirectExchangeCost(
                      test::make_op(CollKind::AllGather, Algorithm::Auto, {{0, 1, 8, 9}}, 1), topo),
                  InputError);
}
