// Collective times on the flow tier against closed forms. Bandwidths are datasheet line rates times
// the profile's efficiency of the link class: NVLink4 on H100 SXM5 is 18 x 25 GB/s = 450 GB/s per
// direction; a NIC of G Gbit/s moves G/8 GB/s.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>

#include "sim/collectives/nccl_model.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/network_model.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using test::make_op;
using zerosim::testing::Approx;

namespace {

constexpr double S = 1 << 30;
constexpr double kNvLinkH100Bps = 450e9;

// An all_reduce over `nodes` nodes of `ranks / nodes` GPUs each, as NCCL's tuner sees it.
CommShape all_reduce_shape(int ranks, int nodes) {
  CommShape sh;
  sh.kind = CollKind::AllReduce;
  sh.ranks = ranks;
  sh.nodes = nodes;
  sh.ppn = ranks / nodes;
  return sh;
}

// The one candidate of a forced algorithm and protocol.
NcclChoice only_choice(const CommShape& sh, const CostProfile& p, NcclAlgo a, NcclProto pr,
                       double bytes) {
  const auto c = nccl_candidates(sh, p, bytes, a, pr);
  REQUIRE(c.size() == 1);
  return c[0];
}

// NCCL's choice for sh under profiles a and b is the same at every size from 1 KiB to 2 GiB,
// every traffic pattern at u seconds per byte.
void check_same_choices(const CommShape& sh, const CostProfile& a, const CostProfile& b, double u) {
  std::array<double, kTrafficPatterns> pattern{};
  pattern.fill(u);
  for (double bytes = 1 << 10; bytes <= double(1u << 31); bytes *= 4) {
    CAPTURE(bytes);
    const NcclChoice ca = nccl_choose(nccl_candidates(sh, a, bytes), bytes, pattern, 1.0);
    const NcclChoice cb = nccl_choose(nccl_candidates(sh, b, bytes), bytes, pattern, 1.0);
    CHECK(ca.algo == cb.algo);
    CHECK(ca.proto == cb.proto);
  }
}

}  // namespace

TEST_CASE("ring all-gather on one NVSwitch node: NCCL's ring latency + (n-1)/n*S/B") {
  const Topology topo = test::dgx("dgx-h100", 1);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const double B = kNvLinkH100Bps * prof.link_class(LinkClass::NvLink).efficiency;
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    std::vector<int> g;
    g.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) g.push_back(r);
    const CollectiveOp op =
        test::ring_simple(make_op(CollKind::AllGather, Algorithm::Auto, {g}, S));
    for (const NetworkTier tier : {NetworkTier::Flow, NetworkTier::Analytic}) {
      CAPTURE(tier);
      const double t = collective_time(tier, op, topo, prof);
      CHECK(t == Approx(test::ring_simple_latency(prof, CollKind::AllGather, n, 1) +
                        (n - 1.0) / n * S / B)
                     .epsilon(1e-9));
    }
  }
}

TEST_CASE(
    "protocols: LL and LL128 move the same bytes at a fraction of the link, with less latency") {
  // One DGX H100 under the 2.23+ table: LL at 1/2 of the link (capped at 141 GB/s busbw on
  // Hopper), LL128 at 0.92 (capped at 36.7 GB/s per channel); their per-hop latencies are the
  // profile's ll / ll128 values and NCCL's baseLat 6.6 / 14 us.
  const Topology topo = test::dgx("dgx-h100", 1);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const double B = kNvLinkH100Bps * prof.link_class(LinkClass::NvLink).efficiency;
  const int n = 8;
  const double f = (n - 1.0) / n;
  const auto base = make_op(CollKind::AllGather, Algorithm::Auto, world_group(topo), S);
  auto with = [&](NcclProto p, double bytes) {
    CollectiveOp op = base;
    op.nccl_proto = p;
    op.bytes = bytes;
    return collective_time(NetworkTier::Analytic, op, topo, prof);
  };
  const auto& nv = prof.link_class(LinkClass::NvLink);
  // NCCL's tuning tables hold floats: its 6.6 us base is 6.6f.
  const double ll_lat = prof.nccl.launch_s + double{6.6f} * 1e-6 + (n - 1) * nv.ll_hop_latency_s;
  const double ll128_lat = prof.nccl.launch_s + 14e-6 + (n - 1) * nv.ll128_hop_latency_s;
  // The profile's LL ratio inside a node (nccl.ll_intra_efficiency) multiplies LL's bandwidth.
  const double ll_bw = std::min(B * 0.5, 141e9) * prof.nccl.ll_intra_efficiency;
  const double ll128_bw = std::min(B * 0.92, 36.7e9 * prof.nccl.channels);
  const double M = 1 << 20;
  CHECK(with(NcclProto::LL, M) == Approx(ll_lat + f * M / ll_bw).epsilon(1e-9));
  CHECK(with(NcclProto::LL128, S) == Approx(ll128_lat + f * S / ll128_bw).epsilon(1e-9));
  // Auto takes the fastest: LL for a few KiB, Simple or LL128 for a GiB, never slower than either.
  CHECK(with(NcclProto::Auto, 4096) == Approx(with(NcclProto::LL, 4096)));
  CHECK(with(NcclProto::Auto, S) <=
        std::min(with(NcclProto::Simple, S), with(NcclProto::LL128, S)));
}

TEST_CASE("multi-node ring steps cost at least NCCL's network post overhead (2.18+)") {
  // 2 DGX H100 nodes, all_gather over 16 ranks: 14 NVLink steps and 1 network step. With NVLink
  // hops cheaper than the overhead, every NVLink step costs getNetOverhead (Intel 1 us, AMD 2 us;
  // x3 for Simple): AMD hosts add 14 x 1 us of latency on LL, 14 x 3 us on Simple. One node, NVLink
  // hops above the overhead, or NCCL 2.12's constants: no difference.
  const Topology topo = test::dgx("dgx-h100", 2);
  CostProfile intel = test::shipped_profile("dgx-h100");
  intel.nccl.host_cpu = HostCpu::Intel;
  intel.link_classes[LinkClass::NvLink].hop_latency_s = 0.5e-6;
  intel.link_classes[LinkClass::NvLink].ll_hop_latency_s = 0.1e-6;
  CostProfile amd = intel;
  amd.nccl.host_cpu = HostCpu::Amd;
  auto time = [&](const CostProfile& p, NcclProto proto, const std::vector<std::vector<int>>& g,
                  double bytes = 1 << 20) {
    auto op = make_op(CollKind::AllGather, Algorithm::Auto, g, bytes);
    op.nccl_algo = NcclAlgo::Ring;
    op.nccl_proto = proto;
    return collective_time(NetworkTier::Analytic, op, topo, p);
  };
  const auto world = world_group(topo);
  // LL's busbw cap across nodes is the host's row too (AMD 22.5 GB/s, Intel 39 on 2 nodes), so
  // the AMD - Intel difference grows with the bytes: its intercept at 0 bytes (from 1 and 2 MiB,
  // the time being affine in the bytes) is the overhead alone.
  const double m1 = 1 << 20, m2 = 2 << 20;
  const double d1 = time(amd, NcclProto::LL, world, m1) - time(intel, NcclProto::LL, world, m1);
  const double d2 = time(amd, NcclProto::LL, world, m2) - time(intel, NcclProto::LL, world, m2);
  CHECK((m2 * d1 - m1 * d2) / (m2 - m1) == Approx(14 * 1e-6).epsilon(1e-6));
  CHECK(d2 > d1);
  CHECK(time(amd, NcclProto::Simple, world) - time(intel, NcclProto::Simple, world) ==
        Approx(14 * 3e-6).epsilon(1e-6));
  const std::vector<std::vector<int>> one_node = {{0, 1, 2, 3, 4, 5, 6, 7}};
  CHECK(time(amd, NcclProto::Simple, one_node) == Approx(time(intel, NcclProto::Simple, one_node)));
  CostProfile slow_intel = intel, slow_amd = amd;
  slow_intel.link_classes[LinkClass::NvLink].hop_latency_s = 7e-6;
  slow_amd.link_classes[LinkClass::NvLink].hop_latency_s = 7e-6;
  CHECK(time(slow_amd, NcclProto::Simple, world) ==
        Approx(time(slow_intel, NcclProto::Simple, world)));
  CostProfile old_intel = intel, old_amd = amd;
  for (CostProfile* p : {&old_intel, &old_amd}) {
    p->nccl.version = "2.12";
    p->nccl.version_code = 21200;
    p->nccl.nvls = false;
  }
  CHECK(time(old_amd, NcclProto::Simple, world) ==
        Approx(time(old_intel, NcclProto::Simple, world)));
}

TEST_CASE(
    "ring all-reduce across nodes: 2 nodes network steps in NCCL 2.12-2.22, 2 (nodes - 1) before "
    "and after") {
  // LL128 (no plateau factor): raising the network LL128 hop by 10 us adds (network steps) x
  // 10 us. 2 nodes x 8 GPUs: nInterSteps is 2 nodes = 4 under 2.12-2.22's tables (v2.18.3,
  // v2.21.5 tuning.cc), 2 (nodes - 1) = 2 under 2.7's and 2.23+'s (v2.30.7); one GPU per node
  // (every step crosses the network): the ring's 2 steps under every table.
  const Topology topo = test::dgx("dgx-h100", 2);
  CostProfile base = test::shipped_profile("dgx-h100");
  REQUIRE(base.nccl.version_code >= 22300);
  auto time = [&](const CostProfile& p, const std::vector<std::vector<int>>& g) {
    auto op = make_op(CollKind::AllReduce, Algorithm::Auto, g, 1 << 20);
    op.nccl_algo = NcclAlgo::Ring;
    op.nccl_proto = NcclProto::LL128;
    return collective_time(NetworkTier::Analytic, op, topo, p);
  };
  auto slower = [](CostProfile p) {
    p.link_classes[LinkClass::Network].ll128_hop_latency_s += 10e-6;
    return p;
  };
  auto release = [&](const char* version, int code) {
    CostProfile p = base;
    p.nccl.version = version;
    p.nccl.version_code = code;
    return p;
  };
  const auto world = world_group(topo);
  const std::vector<std::vector<int>> rails = {{0, 8}};
  CHECK(time(slower(base), world) - time(base, world) == Approx(2 * 10e-6).epsilon(1e-6));
  CHECK(time(slower(base), rails) - time(base, rails) == Approx(2 * 10e-6).epsilon(1e-6));
  for (const CostProfile& p : {release("2.18", 21800), release("2.21", 22100)}) {
    CAPTURE(p.nccl.version);
    CHECK(time(slower(p), world) - time(p, world) == Approx(4 * 10e-6).epsilon(1e-6));
    CHECK(time(slower(p), rails) - time(p, rails) == Approx(2 * 10e-6).epsilon(1e-6));
  }
  CostProfile v27 = release("2.7", 20700);
  v27.nccl.nvls = false;
  CHECK(time(slower(v27), world) - time(v27, world) == Approx(2 * 10e-6).epsilon(1e-6));
}

TEST_CASE("NCCL's treeCorrectionFactor scales the tree's bandwidth in the tuner's choice only") {
  // Index log2(bytes / 64): 128 KiB -> 11 (LL .5, LL128 .6, Simple .5); 512 MiB -> 23, past the
  // 23-entry table before 2.23 (1.0), HEAD's 24th entry from 2.23 (LL 1.0, LL128 1.0, Simple .9).
  const CommShape sh = all_reduce_shape(16, 2);
  const CostProfile v223 = test::shipped_profile("dgx-h100");
  CostProfile v218 = v223;
  v218.nccl.version = "2.18";
  v218.nccl.version_code = 21800;
  auto factor = [&](const CostProfile& p, NcclAlgo a, NcclProto pr, double bytes) {
    return only_choice(sh, p, a, pr, bytes).tuner_bw_factor;
  };
  CHECK(factor(v223, NcclAlgo::Tree, NcclProto::LL, 131072) == 0.5);
  CHECK(factor(v223, NcclAlgo::Tree, NcclProto::LL128, 131072) == 0.6);
  CHECK(factor(v223, NcclAlgo::Tree, NcclProto::Simple, 131072) == 0.5);
  CHECK(factor(v223, NcclAlgo::Tree, NcclProto::Simple, 512.0 * (1 << 20)) == 0.9);
  CHECK(factor(v218, NcclAlgo::Tree, NcclProto::Simple, 512.0 * (1 << 20)) == 1.0);
  CHECK(factor(v223, NcclAlgo::Tree, NcclProto::LL, 512.0 * (1 << 20)) == 1.0);
  CHECK(factor(v223, NcclAlgo::Ring, NcclProto::LL, 131072) == 1.0);
  // The price of a forced tree does not see it: a correction of 0.5 would double the wire time.
  const auto tree = nccl_candidates(sh, v223, 131072, NcclAlgo::Tree, NcclProto::LL)[0];
  const auto tree_big = nccl_candidates(sh, v223, 1 << 30, NcclAlgo::Tree, NcclProto::LL)[0];
  CHECK(tree.wire == tree_big.wire);
  CHECK(tree.cap_Bps == tree_big.cap_Bps);
}

TEST_CASE("nccl.ll128_efficiency divides LL128's wire time, not what NCCL's tuner chooses by") {
  const CommShape sh = all_reduce_shape(8, 1);
  const CostProfile full = test::shipped_profile("dgx-a100");
  CostProfile slow = full;
  slow.nccl.ll128_efficiency = 0.5;
  const double u = 1.0 / 100e9;  // a pattern of 100 GB/s
  const double bytes = 8 << 20;
  const NcclChoice f = only_choice(sh, full, NcclAlgo::Ring, NcclProto::LL128, bytes);
  const NcclChoice h = only_choice(sh, slow, NcclAlgo::Ring, NcclProto::LL128, bytes);
  CHECK(f.hw_bw_factor == 1.0);
  CHECK(h.hw_bw_factor == 0.5);
  // Same latency and the wire time doubled (closed form: latency + bytes x wire x u / 0.5).
  CHECK(h.time_s(bytes, u, 1.0) - h.latency_s ==
        Approx(2 * (f.time_s(bytes, u, 1.0) - f.latency_s)).epsilon(1e-12));
  CHECK(h.effective_wire(u, 1.0) == Approx(2 * f.effective_wire(u, 1.0)).epsilon(1e-12));
  // NCCL's tuner assumes its own LL128 rate: the capped wire it chooses by is unchanged.
  CHECK(h.capped_wire(u, 1.0) == f.capped_wire(u, 1.0));
  CHECK(h.latency_s == f.latency_s);
  // Other protocols do not see it.
  CHECK(only_choice(sh, slow, NcclAlgo::Ring, NcclProto::Simple, bytes).hw_bw_factor == 1.0);
  CHECK(only_choice(sh, slow, NcclAlgo::Ring, NcclProto::LL, bytes).hw_bw_factor == 1.0);
  // The choice among all candidates is the same at every size; only LL128's price moves.
  check_same_choices(sh, full, slow, u);
}

TEST_CASE("nccl.ll_intra_efficiency divides LL's wire time inside a node only, not the choice") {
  const CostProfile full = test::shipped_profile("dgx-a100");
  CostProfile fast = full;
  fast.nccl.ll_intra_efficiency = 2.0;
  const double u = 1.0 / 100e9;
  const double bytes = 256 << 10;
  const CommShape node = all_reduce_shape(8, 1);
  const NcclChoice f = only_choice(node, full, NcclAlgo::Ring, NcclProto::LL, bytes);
  const NcclChoice h = only_choice(node, fast, NcclAlgo::Ring, NcclProto::LL, bytes);
  CHECK(h.hw_bw_factor == 2.0);
  // Closed form: the same latency, half the wire time (the llMaxBw cap included).
  CHECK(h.time_s(bytes, u, 1.0) - h.latency_s ==
        Approx((f.time_s(bytes, u, 1.0) - f.latency_s) / 2).epsilon(1e-12));
  CHECK(h.capped_wire(u, 1.0) == f.capped_wire(u, 1.0));
  CHECK(h.latency_s == f.latency_s);
  // Across nodes LL keeps the rate NCCL assumes; other protocols never see it.
  CHECK(only_choice(all_reduce_shape(16, 2), fast, NcclAlgo::Ring, NcclProto::LL, bytes)
            .hw_bw_factor == 1.0);
  CHECK(only_choice(node, fast, NcclAlgo::Ring, NcclProto::LL128, bytes).hw_bw_factor == 1.0);
  // NCCL's choice is the same at every size.
  check_same_choices(node, full, fast, u);
}

TEST_CASE("NVLS is chosen by NCCL's own efficiency (0.85) and priced by nccl.nvls_efficiency") {
  CostProfile full = test::shipped_profile("dgx-h200");
  full.nccl.nvls_efficiency = 0.85;
  CostProfile half = full;
  half.nccl.nvls_efficiency = 0.425;
  const CommShape node = all_reduce_shape(8, 1);
  const double u = 1.0 / kNvLinkH100Bps;
  const double bytes = 64 << 20;
  const NcclChoice f = only_choice(node, full, NcclAlgo::Nvls, NcclProto::Simple, bytes);
  const NcclChoice h = only_choice(node, half, NcclAlgo::Nvls, NcclProto::Simple, bytes);
  CHECK(f.hw_bw_factor == Approx(1.0).epsilon(1e-15));
  CHECK(h.hw_bw_factor == Approx(0.5).epsilon(1e-15));
  CHECK(h.effective_wire(u, 1.0) == Approx(2 * f.effective_wire(u, 1.0)).epsilon(1e-12));
  CHECK(h.capped_wire(u, 1.0) == f.capped_wire(u, 1.0));
  check_same_choices(node, full, half, u);
}

TEST_CASE("NVLS pays nccl.nvls_chunk_s per chunk of each of its 16 x ranks workers") {
  // 8 ranks: 128 workers. NCCL's chunk: 16 KiB below 2 x 128 x 32 KiB = 8 MiB, 32 KiB below
  // 8 x 128 x 64 KiB = 64 MiB, 64 KiB below 64 x 128 x 128 KiB = 1 GiB, then 128 KiB. Each worker
  // moves ceil(bytes / (128 x chunk)) chunks. The tuner's latency (NCCL's choice) never sees it.
  CostProfile none = test::shipped_profile("dgx-h200");
  none.nccl.nvls_chunk_s = 0;
  CostProfile with = none;
  with.nccl.nvls_chunk_s = 2e-6;
  const CommShape node = all_reduce_shape(8, 1);
  auto extra = [&](double bytes) {
    const NcclChoice a = only_choice(node, with, NcclAlgo::Nvls, NcclProto::Simple, bytes);
    const NcclChoice b = only_choice(node, none, NcclAlgo::Nvls, NcclProto::Simple, bytes);
    CHECK(a.tuner_latency_s == b.tuner_latency_s);
    return (a.latency_s - b.latency_s) / 2e-6;  // chunks per worker
  };
  const double MiB = 1 << 20;
  CHECK(extra(1024) == Approx(1));
  CHECK(extra(4 * MiB) == Approx(2));       // 4 MiB / (128 x 16 KiB)
  CHECK(extra(8 * MiB) == Approx(2));       // 8 MiB: 32 KiB chunks
  CHECK(extra(63 * MiB) == Approx(16));     // ceil(63 MiB / 4 MiB)
  CHECK(extra(64 * MiB) == Approx(8));      // 64 KiB chunks
  CHECK(extra(1023 * MiB) == Approx(128));  // ceil(1023 MiB / 8 MiB)
  CHECK(extra(1024 * MiB) == Approx(64));   // 128 KiB chunks
  // Ring choices on the same node are untouched.
  CHECK(only_choice(node, with, NcclAlgo::Ring, NcclProto::Simple, 64 * MiB).latency_s ==
        only_choice(node, none, NcclAlgo::Ring, NcclProto::Simple, 64 * MiB).latency_s);
  check_same_choices(node, none, with, 1.0 / kNvLinkH100Bps);
}

TEST_CASE("NVLS's three-stage pipeline fill: (k + 2) / k over each worker's k chunks") {
  // 8 ranks, 128 workers, NCCL's chunks as above: 1 MiB is one 16 KiB chunk per worker (fill 3),
  // 4 MiB two (2), 16 MiB four 32 KiB chunks (1.5), 64 MiB eight 64 KiB chunks (1.25), 4 GiB 256
  // 128 KiB chunks (258 / 256). The wire time scales by it; NCCL's tuner does not see it.
  const CostProfile prof = test::shipped_profile("dgx-h200");
  const CommShape node = all_reduce_shape(8, 1);
  const double u = 1.0 / kNvLinkH100Bps;
  const double MiB = 1 << 20;
  auto fill = [&](double bytes) {
    return only_choice(node, prof, NcclAlgo::Nvls, NcclProto::Simple, bytes).fill;
  };
  CHECK(fill(MiB) == Approx(3.0).epsilon(1e-15));
  CHECK(fill(4 * MiB) == Approx(2.0).epsilon(1e-15));
  CHECK(fill(16 * MiB) == Approx(1.5).epsilon(1e-15));
  CHECK(fill(64 * MiB) == Approx(1.25).epsilon(1e-15));
  CHECK(fill(4096 * MiB) == Approx(258.0 / 256).epsilon(1e-15));
  const NcclChoice c = only_choice(node, prof, NcclAlgo::Nvls, NcclProto::Simple, 16 * MiB);
  CHECK(c.effective_wire(u, 1.0) == Approx(1.5 * c.capped_wire(u, 1.0) / c.hw_bw_factor));
  // Ring choices keep a fill of 1.
  CHECK(only_choice(node, prof, NcclAlgo::Ring, NcclProto::Simple, 16 * MiB).fill == 1.0);
}

TEST_CASE(
    "NVLS's 23 us (NCCL 2.18-2.22) is an NVLink hop: the profile's NVLink latency scales it") {
  // NCCL 2.20's tables hold NVLS's latency as 23 us of base latency; the model holds it as the
  // NVLink hop, scaled by the profile's NVLink Simple latency over NCCL's 3.4 us. Doubling that
  // latency adds 23 us to NVLS's price and nothing to what NCCL's tuner sees.
  CostProfile nccl = test::shipped_profile("dgx-h200");
  nccl.nccl.version = "2.20";
  nccl.nccl.version_code = nccl_version_code("2.20");
  nccl.nccl.nvls_chunk_s = 0;
  nccl.link_classes[LinkClass::NvLink].hop_latency_s = 3.4e-6;
  CostProfile slow = nccl;
  slow.link_classes[LinkClass::NvLink].hop_latency_s = 6.8e-6;
  const CommShape node = all_reduce_shape(8, 1);
  const NcclChoice a = only_choice(node, nccl, NcclAlgo::Nvls, NcclProto::Simple, 1 << 20);
  const NcclChoice b = only_choice(node, slow, NcclAlgo::Nvls, NcclProto::Simple, 1 << 20);
  CHECK(a.latency_s == Approx(nccl.nccl.launch_s + 23e-6).epsilon(1e-6));
  CHECK(b.latency_s - a.latency_s == Approx(23e-6).epsilon(1e-6));
  CHECK(a.tuner_latency_s == b.tuner_latency_s);
}

TEST_CASE("a tree's pipeline fill: (k + levels - 1) / k over its log2(nodes) network levels") {
  // 256 nodes x 4 GPUs, 16 channels: 8 network levels. LL chunks hold 32 KiB per channel: 128 KiB
  // is one chunk per channel (fill 8), 16 MiB 32 chunks ((32 + 7) / 32). Simple at 64 MiB: NCCL
  // halves its 512 KiB chunk while the buffer spans fewer than depth x 8 = 88 chunks per channel
  // (depth 3 + 8), down to 128 KiB, then below depth x 4 = 44 down to 64 KiB: 64 chunks. Two
  // nodes (one level) and rings: no fill. The tuner's choice does not see it.
  const CommShape sh = all_reduce_shape(1024, 256);
  CostProfile p = test::shipped_profile("dgx-a100");
  p.nccl.channels = 16;
  auto fill = [&](const CommShape& s, NcclAlgo a, NcclProto pr, double bytes) {
    return only_choice(s, p, a, pr, bytes).fill;
  };
  CHECK(fill(sh, NcclAlgo::Tree, NcclProto::LL, 131072) == Approx(8));
  CHECK(fill(sh, NcclAlgo::Tree, NcclProto::LL, 16 << 20) == Approx(39.0 / 32));
  CHECK(fill(sh, NcclAlgo::Tree, NcclProto::Simple, 64 << 20) == Approx(71.0 / 64));
  CHECK(fill(sh, NcclAlgo::Ring, NcclProto::LL, 131072) == 1);
  CHECK(fill(all_reduce_shape(8, 2), NcclAlgo::Tree, NcclProto::LL, 131072) == 1);
  const auto c = nccl_candidates(sh, p, 131072, NcclAlgo::Tree, NcclProto::LL)[0];
  CHECK(c.effective_wire(1e-9, 2) == Approx(8 * c.capped_wire(1e-9, 2)));
}

TEST_CASE("ring all-gather across nodes is NIC-bound: busbw = C x NIC rate x efficiency") {
  // 2 nodes, 4 NICs of 200 Gbps each: 4 x 25 GB/s per node, far below NVLink.
  const Topology topo = test::dgx("dgx-h100", 2, 4, 200);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int n = topo.gpu_count(), Y = 2, N = topo.gpus_per_node();
  const double nic = 200.0 / 8 * 1e9 * prof.link_class(LinkClass::Network).efficiency;
  (void)N;
  const double latency = test::ring_simple_latency(prof, CollKind::AllGather, n, Y);
  const double t = collective_time(
      NetworkTier::Flow,
      test::ring_simple(make_op(CollKind::AllGather, Algorithm::Auto, world_group(topo), S)), topo,
      prof);
  CHECK(t == Approx(latency + (n - 1.0) / n * S / 4 / nic).epsilon(1e-9));
  const double busbw = S / t * busbw_factor(CollKind::AllGather, n);
  CHECK(busbw == Approx(4 * nic).epsilon(0.01));  // latency is < 1% at 1 GiB
}

TEST_CASE("16 DGX H100 nodes, 8 x 400 Gbps: ring all-gather streams at min(NVLink, 8 NICs)") {
  // With PXN every GPU's NVLink carries (n-1)/n*S (as in one node) and every NIC (n-1)/n*S/8, so
  // the ring streams at min(B_nvlink, 8 x NIC) of busbw; NCCL's ring latency adds (n-Y) NVLink and
  // (Y-1) network hop alphas.
  const int Y = 16;
  const Topology topo = test::dgx("dgx-h100", Y, 8, 400);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int n = topo.gpu_count(), N = topo.gpus_per_node();
  const double B = std::min(kNvLinkH100Bps * prof.link_class(LinkClass::NvLink).efficiency,
                            8 * 400.0 / 8 * 1e9 * prof.link_class(LinkClass::Network).efficiency);
  (void)N;
  const double latency = test::ring_simple_latency(prof, CollKind::AllGather, n, Y);
  const double t = collective_time(
      NetworkTier::Flow,
      test::ring_simple(make_op(CollKind::AllGather, Algorithm::Auto, world_group(topo), S)), topo,
      prof);
  CHECK(t == Approx(latency + (n - 1.0) / n * S / B).epsilon(1e-9));
}

TEST_CASE("two collectives sharing the NICs each get half") {
  // One 200 Gbps NIC per node: two rail all-gathers {0, 8} and {1, 9} both cross it.
  const Topology topo = test::dgx("dgx-h100", 2, 1, 200);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const double nic = 200.0 / 8 * 1e9 * prof.link_class(LinkClass::Network).efficiency;
  const auto a = test::ring_simple(make_op(CollKind::AllGather, Algorithm::Auto, {{0, 8}}, S));
  const auto b = test::ring_simple(make_op(CollKind::AllGather, Algorithm::Auto, {{1, 9}}, S));
  const double alpha_a = test::ring_simple_latency(prof, CollKind::AllGather, 2, 2);
  const double alpha_b = alpha_a;
  // Alone: one step of latency, then S/2 at the NIC's rate.
  CHECK(collective_time(NetworkTier::Flow, a, topo, prof) ==
        Approx(alpha_a + S / 2 / nic).epsilon(1e-6));

  Engine engine;
  auto net = make_network_model(NetworkTier::Flow, engine, topo, prof);
  double done_a = -1, done_b = -1;
  net->start(a, [&] { done_a = engine.now(); });
  net->start(b, [&] { done_b = engine.now(); });
  engine.run();
  // Together: both stream at half the NIC rate.
  const double alpha = std::max(alpha_a, alpha_b);
  CHECK(done_a == Approx(alpha + S / 2 / (nic / 2)).epsilon(1e-3));
  CHECK(done_b == Approx(alpha + S / 2 / (nic / 2)).epsilon(1e-3));
}

TEST_CASE("two-hop all-to-all moves 1/N of a direct all-to-all's bytes across nodes") {
  const Topology topo = test::dgx("dgx-h100", 4);
  const CostProfile prof = test::shipped_profile("dgx-h100");
  const int N = topo.gpus_per_node();
  Engine e1, e2;
  auto direct = make_network_model(NetworkTier::Flow, e1, topo, prof);
  auto two_hop = make_network_model(NetworkTier::Flow, e2, topo, prof);
  direct->start(make_op(CollKind::AllToAll, Algorithm::Direct, world_group(topo), S), [] {});
  two_hop->start(make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, world_group(topo), S),
                 [] {});
  e1.run();
  e2.run();
  REQUIRE(direct->stats().inter_node_bytes > 0);
  CHECK(two_hop->stats().inter_node_bytes == Approx(direct->stats().inter_node_bytes / N));
}

TEST_CASE("a 2:1 oversubscribed spine halves the rate of cross-spine flows") {
  // Fat-tree, 8 NICs per node: a leaf takes 4 servers, so nodes 0-3 and 4-7 sit on different
  // leaves. Every GPU of nodes 0-3 sends to its peer 4 nodes on: 32 flows over the leaves' uplinks,
  // whose capacity is (used downlinks x NIC rate / oversubscription). Whatever ECMP's split over
  // the 2 spines, the most loaded uplink holds >= 16 of the 32 flows and is their bottleneck at 1:1
  // or NIC-equal; at 2:1 its capacity halves, so the slowest flow's streaming time doubles. Flows
  // inside one leaf (node 0 -> node 1) do not see the oversubscription.
  const CostProfile prof = test::shipped_profile("dgx-h100");
  std::vector<std::vector<int>> cross, local;
  for (int g = 0; g < 32; ++g) cross.push_back({g, g + 32});
  for (int g = 0; g < 8; ++g) local.push_back({g, g + 8});
  double stream[2] = {0, 0}, local_t[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const Topology topo = test::dgx("dgx-h100", 8, 8, 400, "fat-tree", i == 0 ? 1.0 : 2.0);
    const double alpha = test::p2p_latency(prof, test::step_alpha(topo, prof, 0, 32), 0, 1);
    stream[i] =
        collective_time(NetworkTier::Flow, make_op(CollKind::SendRecv, Algorithm::Auto, cross, S),
                        topo, prof) -
        alpha;
    local_t[i] = collective_time(
        NetworkTier::Flow, make_op(CollKind::SendRecv, Algorithm::Auto, local, S), topo, prof);
  }
  const double nic = 400.0 / 8 * 1e9 * prof.link_class(LinkClass::Network).efficiency;
  CHECK(stream[0] >= S / nic * (1 - 1e-9));  // never faster than the NIC
  CHECK(stream[1] == Approx(2 * stream[0]).epsilon(1e-6));
  CHECK(local_t[1] == Approx(local_t[0]).epsilon(1e-9));
}

TEST_CASE("the small-message path: below p2p_small_bytes per peer, each network peer costs more") {
  // 2 DGX H100 nodes: an all_to_all of the 16 GPUs has 8 network peers per rank (and 7 on its
  // node); a send_recv across nodes has one.
  const Topology topo = test::dgx("dgx-h100", 2);
  CostProfile with = test::shipped_profile("dgx-h100");
  CostProfile without = with;
  with.nccl.p2p_small_bytes = 256;
  with.nccl.p2p_small_net_peer_s = 11e-6;
  const std::vector<std::vector<int>> all = world_group(topo);
  const double n = static_cast<double>(all[0].size());
  for (const NetworkTier tier : {NetworkTier::Analytic, NetworkTier::Flow}) {
    CAPTURE(tier);
    auto extra = [&](const CollectiveOp& op) {
      return collective_time(tier, op, topo, with) - collective_time(tier, op, topo, without);
    };
    // 128 B per peer: 8 network peers x 11 us; 256 B per peer: none.
    CHECK(extra(make_op(CollKind::AllToAll, Algorithm::Direct, all, 128 * n)) ==
          Approx(8 * 11e-6).epsilon(1e-9));
    CHECK(extra(make_op(CollKind::AllToAll, Algorithm::Direct, all, 256 * n)) == 0);
    CHECK(extra(make_op(CollKind::SendRecv, Algorithm::Auto, {{0, 8}}, 64)) ==
          Approx(11e-6).epsilon(1e-9));
    CHECK(extra(make_op(CollKind::SendRecv, Algorithm::Auto, {{0, 1}}, 64)) == 0);  // NVLink
    // NCCL's own collectives and qgZ's two-hop exchange are not grouped send/recv of small
    // messages: unchanged.
    CHECK(extra(make_op(CollKind::AllGather, Algorithm::Auto, all, 64)) == 0);
    CHECK(extra(make_op(CollKind::AllToAll, Algorithm::TwoHopAllToAll, all, 128 * n)) == 0);
  }
}

TEST_CASE("nccl-tests' thread driving G GPUs times a call at no less than G host launches") {
  // A loop of back-to-back calls: the host launches the next call's G kernels while the GPUs run
  // this one, so a call takes max(its time on the GPUs, G x nccl.host_launch_s).
  const Topology topo = test::dgx("dgx-h100", 1);
  CostProfile prof = test::shipped_profile("dgx-h100");
  prof.nccl.host_launch_s = 5e-6;
  auto op = make_op(CollKind::AllReduce, Algorithm::Auto, world_group(topo), 1 << 10);
  const double gpu_small = collective_time(NetworkTier::Analytic, op, topo, prof);
  REQUIRE(gpu_small > 5e-6);
  REQUIRE(gpu_small < 40e-6);
  CHECK(nccl_tests_time(NetworkTier::Analytic, op, topo, prof, 1) == gpu_small);
  CHECK(nccl_tests_time(NetworkTier::Analytic, op, topo, prof, 8) == Approx(40e-6).epsilon(1e-12));
  op.bytes = S;
  const double gpu_large = collective_time(NetworkTier::Analytic, op, topo, prof);
  CHECK(nccl_tests_time(NetworkTier::Analytic, op, topo, prof, 8) == gpu_large);
  // The floor is the benchmark loop's, not the GPUs': a collective alone is priced without it.
  prof.nccl.host_launch_s = 0;
  CHECK(collective_time(NetworkTier::Analytic, op, topo, prof) == gpu_large);
}
