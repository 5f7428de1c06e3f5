// NCCL's protocol enablement from the machine's description (nccl_model.cpp, ll128_enabled: NCCL
// tuning.cc, v2.18.3 / v2.21.5 / v2.30.7) and the fabric's group law (nccl.group_nodes,
// nccl.group_step_s): which candidates exist, and what the law adds to a ring's latency, against
// the rules' closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "sim/collectives/nccl_model.hpp"
#include "sim/core/error.hpp"
#include "sim/topology/topology.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

CommShape shape(CollKind kind, int nodes, int ppn, LinkClass intra = LinkClass::NvLink) {
  CommShape s;
  s.kind = kind;
  s.nodes = nodes;
  s.ppn = ppn;
  s.ranks = nodes * ppn;
  s.intra = intra;
  return s;
}

bool has_ll128(const CommShape& s, const CostProfile& p) {
  const std::vector<NcclChoice> c = nccl_candidates(s, p, 1 << 20);
  return std::any_of(c.begin(), c.end(),
                     [](const NcclChoice& x) { return x.proto == NcclProto::LL128; });
}

}  // namespace

TEST_CASE("LL128 across nodes only when the NIC path is at most PXB (Hopper: PXN)") {
  const CostProfile ampere = test::shipped_profile("dgx-a100");
  const CostProfile hopper = test::shipped_profile("dgx-h100");
  CommShape multi = shape(CollKind::AllGather, 4, 8);
  CommShape one = shape(CollKind::AllGather, 1, 8);
  for (NicPath path : {NicPath::Pix, NicPath::Pxb, NicPath::Pxn, NicPath::Phb, NicPath::Sys}) {
    CAPTURE(nic_path_key(path));
    multi.type_inter = one.type_inter = path;
    const int type = static_cast<int>(path);
    CHECK(has_ll128(multi, ampere) == (type <= 4));  // PATH_PXB = 4
    CHECK(has_ll128(multi, hopper) == (type <= 5));  // PATH_PXN = 5
    // One node's graphs cross no NIC: the path does not matter.
    CHECK(has_ll128(one, ampere));
    CHECK(has_ll128(one, hopper));
  }
  // Both tree and ring lose it, and LL and Simple stay.
  CommShape ar = shape(CollKind::AllReduce, 4, 8);
  ar.type_inter = NicPath::Phb;
  CHECK(nccl_candidates(ar, ampere, 1 << 20).size() == 4);  // ring and tree, LL and Simple each
  // A forced LL128 across nodes is refused as NCCL refuses it.
  multi.type_inter = NicPath::Phb;
  CHECK_THROWS_AS(nccl_candidates(multi, ampere, 1 << 20, NcclAlgo::Ring, NcclProto::LL128),
                  InputError);
}

TEST_CASE("the NIC path is the topology's: PXN stands in for a far NIC only with a PXB peer") {
  // nccl_type_inter: PXN replaces a path worse than PXB when the node has a PXB peer.
  CHECK(nccl_type_inter(NicPath::Phb, true) == NicPath::Pxn);
  CHECK(nccl_type_inter(NicPath::Sys, true) == NicPath::Pxn);
  CHECK(nccl_type_inter(NicPath::Phb, false) == NicPath::Phb);
  CHECK(nccl_type_inter(NicPath::Pix, true) == NicPath::Pix);
  CHECK(nccl_type_inter(NicPath::Pxb, true) == NicPath::Pxb);
  // The presets: Polaris PHB without PXN (no LL128 across nodes on Ampere), DGX PXB.
  const Topology polaris = load_cluster("polaris");
  CHECK(polaris.nic_path() == NicPath::Phb);
  CHECK_FALSE(polaris.pxn());
  CHECK(polaris.nccl_type_inter() == NicPath::Phb);
  ClusterOverrides two;
  two.nodes = 2;
  const Topology dgx = load_cluster("dgx-h100", two);
  CHECK(dgx.nccl_type_inter() == NicPath::Pxb);
  // comm_shape carries the topology's path into NCCL's rule: an all_gather across Polaris' two
  // nodes has no LL128, across two DGX A100 nodes it has.
  CollectiveOp op;
  op.kind = CollKind::AllGather;
  op.bytes = 1 << 20;
  op.groups = GroupList({std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(comm_shape(op, polaris).type_inter == NicPath::Phb);
  CHECK_FALSE(has_ll128(comm_shape(op, polaris), test::shipped_profile("polaris-a100")));
  const Topology a100 = load_cluster("dgx-a100", two);
  op.groups = GroupList({std::vector<int>{0, 1, 8, 9}});
  CHECK(has_ll128(comm_shape(op, a100), test::shipped_profile("dgx-a100")));
}

TEST_CASE("LL128 inside a node only over NVLink (typeIntra <= PATH_NVB)") {
  const CostProfile p = test::shipped_profile("dgx-h100");
  CHECK(has_ll128(shape(CollKind::AllGather, 1, 8, LinkClass::NvLink), p));
  CHECK_FALSE(has_ll128(shape(CollKind::AllGather, 1, 8, LinkClass::Pcie), p));
  CHECK_FALSE(has_ll128(shape(CollKind::AllGather, 2, 8, LinkClass::Pcie), p));
  // One rank per node: no intra-node hop, the NIC path alone decides.
  CHECK(has_ll128(shape(CollKind::AllGather, 4, 1, LinkClass::Pcie), p));
}

TEST_CASE("a ring across the fabric's groups: every step costs at least group_step") {
  // 2.18 table, AMD host: LL ring all_gather on n nodes x 4 GPUs runs 4n - 1 steps, n - 1 across
  // the network. Below the group size the law adds nothing; above it each step costs
  // max(its latency, group_step), and NCCL's tuner sees none of it.
  CostProfile p = test::shipped_profile("polaris-a100");
  p.nccl.version = "2.18";
  p.nccl.version_code = 21800;
  p.nccl.host_cpu = HostCpu::Amd;
  p.link_classes[LinkClass::NvLink].ll_hop_latency_s = 0.6e-6;
  p.link_classes[LinkClass::Network].ll_hop_latency_s = 2.7e-6;
  p.nccl.group_nodes = 14;
  p.nccl.group_step_s = 8e-6;
  CostProfile none = p;
  none.nccl.group_step_s = 0;
  auto ring_ll = [](int nodes, const CostProfile& prof) {
    return nccl_candidates(shape(CollKind::AllGather, nodes, 4), prof, 16384, NcclAlgo::Ring,
                           NcclProto::LL)[0];
  };
  for (int nodes : {2, 8, 14}) {
    CAPTURE(nodes);
    CHECK(ring_ll(nodes, p).latency_s == ring_ll(nodes, none).latency_s);
  }
  for (int nodes : {15, 256}) {
    CAPTURE(nodes);
    const NcclChoice with = ring_ll(nodes, p), without = ring_ll(nodes, none);
    // Every hop is below 8 us (NVLink LL 0.6 x 1.8 under the AMD floor of 2 us, network LL
    // 2.7 us), so the ring's hops cost exactly steps x 8 us.
    const double launch_base = without.latency_s -
                               (4.0 * nodes - 1 - (nodes - 1)) * std::max(0.6e-6 * 1.8, 2e-6) -
                               (nodes - 1) * 2.7e-6;
    CHECK(with.latency_s == Approx(launch_base + (4.0 * nodes - 1) * 8e-6).epsilon(1e-9));
    CHECK(with.tuner_latency_s == without.tuner_latency_s);
  }
}
