// NCCL's tuning model: candidates, their latency and bandwidth terms, and the choice.
//
// Constant tables (NVIDIA/nccl src/graph/tuning.cc; 2.12 quoted in
// ../shared/data/nccl-tuning-model.md, 2.18.3, 2.21.5 and 2.30.7 in ../shared/reference/nccl/):
//  - kV212: releases 2.7 to 2.17 (baseLat unchanged over them; Volta-era rows; LL at 1/4 or 1/3
//    of the link; tree at 0.92; ring all-reduce plateau x1.9 from nRanks/16 x 64 KiB);
//  - kV218: 2.18 to 2.20 (v2.18.3: new baseLat, NVLS and NVLS tree, tree x0.85 more, plateau
//    x1.4 (x1.9 on Volta) from 64 B per channel-rank; NVLS tree 23 us + 2 (nodes - 1) network
//    hops); 2.19 and 2.20, whose sources are not in the reference, take it;
//  - kV221: 2.21 and 2.22 (v2.21.5: tree Simple hops 28 us on every link class, NVLS and NVLS
//    tree 25 us NVLink hop and no base, NVLS tree 2 log2(nodes) network hops of 14 us, LL at 1/2
//    of the link, Hopper llMaxBw 141/45/35 GB/s);
//  - kV223: 2.23 and later (v2.30.7: PAT for all_gather / reduce_scatter with one rank per node,
//    tree Simple hops back to 4 / 4 / 14 us with an 8.4 us base, NVLS tree network hop 20.9 us).
// Every release multiplies the whole tuner latency of a multi-node Simple ring all-reduce, base
// and steps (ncclTopoGetAlgoTime's `lat *=`), past its plateau size; zerosim's own launch is not
// NCCL's latency and is not multiplied. LL's busbw cap (llMaxBws) is read from the GPU
// architecture's row on one node and from the host CPU's row across nodes (see ll_row).
// Across versions: ring all-reduce crosses the network 2 (nodes - 1) times in 2.7, 2 nodes from
// 2.12 to 2.22, 2 (nodes - 1) again in 2.23+ (v2.30.7); from 2.18 a multi-node ring's steps cost at
// least the host CPU's network post overhead (getNetOverhead, profile nccl.host_cpu); from 2.12 the
// tuner scales tree bandwidth by treeCorrectionFactor (what NCCL chooses by; the price keeps the
// links' rate). A tree's price adds its pipeline fill across log2(nodes) network levels when the
// buffer spans few chunks (tree_fill; NCCL's tuner assumes a filled pipeline); NVLS's adds the fill
// of its three-stage pipeline (nvls_fill) and a cost per chunk of each of its workers
// (nvls_chunk_time; the tuner sees neither). hw[class][algo][proto] are NCCL's per-hop latencies.
// The profile's per-class ring latencies replace hw[class][Ring][proto]; every other algorithm's
// hop latency over that class is scaled by the same ratio (profile / table ring value), so one
// fitted number per class and protocol moves them all.
#include "sim/collectives/nccl_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/collectives/lowering_detail.hpp"
#include "sim/core/error.hpp"

namespace zerosim {
namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
enum AlgoIdx { kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kPat = 4, kAlgos = 5 };
enum HwIdx { kNvlinkHw = 0, kPciHw = 1, kNetHw = 2 };
// What NCCL's tuner assumes NVLS delivers (nvlsEfficiency for Hopper); the profile's
// nccl.nvls_efficiency is what it achieves, which prices the time but not the choice.
constexpr double kTunerNvlsEfficiency = 0.85;

struct Table {
  float base[kAlgos][3];
  float hw[3][kAlgos][3];
  double ring_ll_fraction_multi;   // LL on a ring, multi-node or all-reduce
  double ring_ll_fraction_single;  // LL on a ring, single node all_gather / reduce_scatter
  double ll_max_bw[3][3];          // [row][nodes 1 / 2 / more] GB/s (LL busbw cap; ll_row)
  double ring_ll128_per_channel[3];
  double tree_ll128_per_channel[3][3];
  double tree_per_channel[3][3];
  double tree_pattern_factor;  // 2.18+: tree busbw x0.85
  bool pat;
  bool plateau_per_channel;  // plateau from 64 B per channel and rank (2.23+), else nRanks/16 x 64K
  double plateau_volta, plateau_other;
  bool net_overhead;  // 2.18+: every step of a multi-node ring costs at least the host's network
                      // post overhead (getNetOverhead), x3 for Simple
  bool nvls_tree_log_levels;  // NVLS tree's network hops: 2 log2(nodes) (2.21+), else 2 (nodes - 1)
  // A multi-node ring all-reduce's network steps (nInterSteps): 2 (nodes - 1) in v2.30.7 (2.23+),
  // 2 nodes in v2.18.3 and v2.21.5 (and from 2.12; 2.7 had 2 (nodes - 1) as well).
  bool ring_allreduce_net_2n_minus_2;
};

constexpr Table kV212 = {{{4.4f, 4.4f, 0}, {3.6f, 10.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
                         {{{.52f, 1.25f, 28}, {.47f, 1.9f, 3.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
                          {{1.0f, 1.9f, 28}, {1.0f, 2.5f, 5.7f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
                          {{5.0f, 8.5f, 28}, {2.7f, 4.0f, 9.6f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
                         1.0 / 4.0,
                         1.0 / 3.0,
                         {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
                         {20.0, 20.0, 36.7},
                         {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
                         {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 33.0}},
                         1.0,
                         false,
                         false,
                         1.9,
                         1.9,
                         false,
                         false,
                         false};

// 2.18-2.20 carry NVLS's and NVLS tree's 23 us as base latency; 2.21+ carry it (25 us) as the
// NVLink hop. The tables here hold it as the NVLink hop, so the profile's NVLink Simple latency
// scales it as it scales every other NVLink hop (NCCL's tuner sum is the same either way).
constexpr Table kV218 = {
    {{6.8f, 14.0f, 0}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{{.6f, 1.25f, 4}, {.6f, 1.9f, 3.4f}, {0, 0, 23.0f}, {0, 0, 23.0f}, {0, 0, 0}},
     {{1.0f, 1.9f, 6}, {1.0f, 2.5f, 5.7f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 18}, {0, 0, 19}, {0, 0, 0}}},
    1.0 / 4.0,
    1.0 / 3.0,
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
    {20.0, 20.0, 36.7},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
    0.85,
    false,
    true,
    1.9,
    1.4,
    true,
    false,
    false};

// v2.21.5's changes to v2.18.3's table.
constexpr Table v221_from(Table t) {
  for (auto& cls : t.hw) cls[kTree][kSimple] = 28;  // tree Simple: 28 us on every link class
  t.hw[kNvlinkHw][kNvls][kSimple] = 25;
  t.hw[kNvlinkHw][kNvlsTree][kSimple] = 25;
  t.hw[kNetHw][kNvlsTree][kSimple] = 14;
  t.ring_ll_fraction_multi = t.ring_ll_fraction_single = 1.0 / 2.0;
  t.ll_max_bw[2][0] = 141.0;  // Hopper's row
  t.ll_max_bw[2][1] = 45.0;
  t.ll_max_bw[2][2] = 35.0;
  t.nvls_tree_log_levels = true;
  return t;
}
constexpr Table kV221 = v221_from(kV218);

constexpr Table kV223 = {
    {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}},
    {{{.6f, 1.25f, 4}, {.6f, 1.9f, 3.4f}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4}},
     {{1.0f, 1.9f, 4}, {1.0f, 2.5f, 5.7f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4}},
     {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 18}, {0, 0, 20.9f}, {0, 0, 14}}},
    1.0 / 2.0,
    1.0 / 2.0,
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}},
    {20.0, 20.0, 36.7},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
    0.85,
    true,
    true,
    1.9,
    1.4,
    true,
    true,
    true};

const Table& table_for(int version_code) {
  if (version_code >= 22300) return kV223;
  if (version_code >= 22100) return kV221;
  if (version_code >= 21800) return kV218;
  return kV212;
}

int hw_index(LinkClass c) {
  return c == LinkClass::Network ? kNetHw : c == LinkClass::Pcie ? kPciHw : kNvlinkHw;
}

double profile_ring_latency(const LinkClassCost& c, int proto) {
  return proto == kLL      ? c.ll_hop_latency_s
         : proto == kLL128 ? c.ll128_hop_latency_s
                           : c.hop_latency_s;
}

// Hop latency of algorithm `algo` over `cls` with protocol `proto`: NCCL's table value scaled by
// the profile's ring latency for that class and protocol over the table's.
// tuner: NCCL's own view (the table's ring value), which is what NCCL chooses by.
double hop_latency(const Table& t, const CostProfile& profile, LinkClass cls, int algo, int proto,
                   bool tuner) {
  const int hw = hw_index(cls);
  const double table_ring = t.hw[hw][kRing][proto];
  const double mine =
      tuner ? table_ring * 1e-6 : profile_ring_latency(profile.link_class(cls), proto);
  if (algo == kRing) return mine;
  return t.hw[hw][algo][proto] * 1e-6 * (table_ring > 0 ? mine / (table_ring * 1e-6) : 1.0);
}

int log2i(int n) {
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

int node_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

// llMaxBws' row (ncclTopoTuneModel's index1 in tuning.cc, v2.18.3, v2.21.5, v2.30.7): the GPU
// architecture's on one node; across nodes the host CPU's, AMD's row 1 (v2.30.7 also for a mix of
// vendors, which zerosim's host_cpu cannot name) and any other vendor's row 0 (v2.30.7: "for
// single node, we look at GPU type; for multi-node, we look at CPU type").
int ll_row(const NcclParams& n, int nodes) {
  if (nodes == 1) return static_cast<int>(n.arch);
  return n.host_cpu == HostCpu::Amd ? 1 : 0;
}

// NCCL's treeCorrectionFactor[proto][log2(bytes / 64)] (2.12 onwards; 23 entries, 24 from 2.23):
// the tuner's tree bandwidth times this factor, NVIDIA's measured shortfall of a tree's pipeline
// at mid sizes.
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

double tree_correction(int version_code, int proto, double bytes) {
  if (version_code < 21200) return 1.0;  // the quoted 2.7 tuner has no correction
  std::int64_t b = static_cast<std::int64_t>(bytes) >> 6;
  int log_size = 0;
  while (b > 1) {
    b >>= 1;
    ++log_size;
  }
  const int entries = version_code >= 22300 ? 24 : 23;
  return log_size < entries ? kTreeCorrection[proto][log_size] : 1.0;
}

// A tree's pipeline fill. NCCL's tree moves each channel's share of the buffer in chunks through
// log2(nodes) network levels; a level forwards a chunk once it holds all of it (the proxy posts one
// network send per chunk), so with k chunks per channel the transfer takes (k + levels - 1) / k
// of the filled pipeline's time NCCL's model assumes. Chunk payload per channel (NCCL's
// enqueue.cc, buffer sizes of devcomm.h / NCCL_STEPS 8): LL 32 KiB (64 KiB of 16-B lines, half
// payload), never adapted; LL128 576000 B (614400 B of lines x 120/128) and Simple 512 KiB,
// halved by NCCL while the buffer spans too few chunks for the tree's depth (LL128 down to 32 KiB,
// Simple to 32 KiB), so their fill stays small. NVLink levels inside a node are left out (they
// forward at NVLink rate). One node or one level: 1.
double tree_fill(const CommShape& s, double channels, int proto, double bytes) {
  const int levels = log2i(s.nodes);
  if (levels <= 1 || !(bytes > 0)) return 1.0;
  const double ch = std::max(1.0, channels);
  const auto spans = [&](double chunk) { return bytes / (ch * chunk); };
  double chunk = 0;
  if (proto == kLL) {
    chunk = 32768;
  } else if (proto == kLL128) {
    chunk = 576000;
    const double ppn = static_cast<double>(s.ranks) / s.nodes;
    const double steps = 1 + levels + 0.1 * ppn;
    while (spans(chunk) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (spans(chunk) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
  } else {
    chunk = 524288;
    const double depth = s.ppn - 1 + levels;
    while (spans(chunk) < depth * 8 && chunk > 131072) chunk /= 2;
    while (spans(chunk) < depth * 4 && chunk > 65536) chunk /= 2;
    while (spans(chunk) < depth && chunk > 32768) chunk /= 2;
  }
  const double k = std::max(1.0, std::ceil(spans(chunk)));
  return (k + levels - 1) / k;
}

// NVLS's chunking (NCCL enqueue.cc, computeColl's NVLS branch): chunks of nvlsChunkSize, 128 KiB,
// shrunk to 64 KiB while the buffer holds fewer than 64 chunks per concurrent op, 32 KiB below 8
// and 16 KiB below 2; the concurrent ops are channels x heads (NVLS runs 16 channels, NCCL's
// NCCL_NVLS_NCHANNELS default, and every rank of the node is a head). Each op moves its chunks in
// turn and pays the profile's nvls_chunk_s per chunk beyond its bytes, so mid-size buffers, cut
// into small chunks, reach less of the link. Evidence: nccl-tests on one 8-GPU H100 node (NCCL
// 2.29) and H200 node (2.20) both step up in busbw at 1 GiB, where the chunk grows to 128 KiB.
constexpr double kNvlsChannels = 16;

double nvls_chunk_bytes(double bytes, double ops) {
  double chunk = 131072;
  if (bytes < 64 * ops * chunk) chunk = 65536;
  if (bytes < 8 * ops * chunk) chunk = 32768;
  if (bytes < 2 * ops * chunk) chunk = 16384;
  return chunk;
}

// Chunks each of NVLS's concurrent ops moves in turn.
double nvls_chunks_per_op(const CommShape& s, double bytes) {
  const double ops = kNvlsChannels * s.ranks;
  return std::max(1.0, std::ceil(bytes / (ops * nvls_chunk_bytes(bytes, ops))));
}

double nvls_chunk_time(const CommShape& s, const CostProfile& profile, double bytes) {
  if (!(profile.nccl.nvls_chunk_s > 0) || !(bytes > 0)) return 0;
  return nvls_chunks_per_op(s, bytes) * profile.nccl.nvls_chunk_s;
}

// NVLS's pipeline fill. NCCL's one-node NVLS all_reduce kernel (src/device/all_reduce.h, as
// recalled) splits each op's warps into three groups a chunk passes through in turn: scatter
// (input into the NVLS buffers), reduce (multimem load-reduce, multicast store) and gather.
// With k chunks per op the transfer takes (k + 2) / k of the filled pipeline's time: the first
// chunk's way in and the last one's way out leave the links partly idle. Evidence: on the Azure
// H200 node (NCCL 2.20) the time from 256 MiB to 4 GiB is one straight line at 274.7 GB/s whose
// intercept doubles (55 -> 110 us) where the chunk doubles at 1 GiB; NCCL's tuner assumes 1.
constexpr double kNvlsStages = 3;

double nvls_fill(const CommShape& s, double bytes) {
  if (!(bytes > 0)) return 1.0;
  const double k = nvls_chunks_per_op(s, bytes);
  return (k + kNvlsStages - 1) / k;
}

// NCCL's getNetOverhead (2.18+): the host CPU's cost of posting one network operation, in seconds.
double net_overhead_s(HostCpu cpu) { return cpu == HostCpu::Amd ? 2e-6 : 1e-6; }

// Do the communicator's nodes span several of the fabric's groups (nodes placed in order, as
// schedulers allocate them, so n nodes span ceil(n / group_nodes) groups)?
bool spans_groups(const CostProfile& profile, const CommShape& s) {
  return profile.nccl.group_nodes > 0 && s.nodes > profile.nccl.group_nodes;
}

double latency_of(const Table& t, const CostProfile& profile, const CommShape& s, int algo,
                  int proto, double bytes, bool tuner) {
  const NcclParams& n = profile.nccl;
  const double base = t.base[algo][proto] * 1e-6;
  double lat = n.launch_s + base;
  const bool multi = s.nodes > 1;
  if (algo == kRing) {
    const int mult = s.kind == CollKind::AllReduce ? 2 : 1;
    const int steps = mult * (s.ranks - 1);
    // Network steps: nodes - 1 for all_gather / reduce_scatter; for all_reduce 2 (nodes - 1) in
    // NCCL 2.7 and again in 2.23+ (v2.30.7's nInterSteps), 2 nodes from 2.12 to 2.22 (v2.18.3,
    // v2.21.5: a chunk crosses each of the ring's node boundaries on both passes), never more
    // than the ring's steps (one rank per node: every step is a network one).
    const int ar_inter =
        n.version_code < 21200 || t.ring_allreduce_net_2n_minus_2 ? 2 * (s.nodes - 1) : 2 * s.nodes;
    const int inter = !multi ? 0 : mult == 2 ? std::min(ar_inter, steps) : s.nodes - 1;
    double intra = hop_latency(t, profile, s.intra, kRing, proto, tuner);
    if (multi && proto == kLL) intra *= 1.8;
    // A multi-node ring's steps are paced by the proxy posting one network operation per step
    // (NCCL: "inter-node rings still have to launch nsteps * net overhead").
    if (multi && t.net_overhead)
      intra = std::max(intra, net_overhead_s(profile.nccl.host_cpu) * (proto == kSimple ? 3 : 1));
    double net = hop_latency(t, profile, LinkClass::Network, kRing, proto, tuner);
    // A ring across the fabric's groups: every step waits for its slowest edge, one that crosses
    // the global links (the price only: NCCL's tuner has no such term).
    if (!tuner && spans_groups(profile, s)) {
      intra = std::max(intra, n.group_step_s);
      net = std::max(net, n.group_step_s);
    }
    const double ring = (steps - inter) * intra + inter * net;
    // NCCL's plateau multiplies its whole latency, base and steps.
    if (s.kind == CollKind::AllReduce && proto == kSimple && multi) {
      const bool plateau = t.plateau_per_channel
                               ? bytes / (static_cast<double>(n.channels) * s.ranks) >= 64
                               : bytes >= s.ranks / 16.0 * 65536;
      if (plateau)
        return n.launch_s +
               (base + ring) * (n.arch == GpuArch::Volta ? t.plateau_volta : t.plateau_other);
    }
    return lat + ring;
  }
  if (algo == kTree)
    return lat +
           2 * ((s.ppn - 1) * hop_latency(t, profile, s.intra, kTree, proto, tuner) +
                log2i(s.nodes) * hop_latency(t, profile, LinkClass::Network, kTree, proto, tuner));
  // NVLS: one NVLink hop, and (the price only: NCCL's tuner does not see it) its chunks'
  // synchronization.
  if (algo == kNvls)
    return lat + hop_latency(t, profile, LinkClass::NvLink, kNvls, proto, tuner) +
           (tuner ? 0 : nvls_chunk_time(s, profile, bytes));
  if (algo == kNvlsTree) {
    const int net_hops = 2 * (t.nvls_tree_log_levels ? log2i(s.nodes) : s.nodes - 1);
    return lat + hop_latency(t, profile, LinkClass::NvLink, kNvlsTree, proto, tuner) +
           net_hops * hop_latency(t, profile, LinkClass::Network, kNvlsTree, proto, tuner);
  }
  // PAT: one rank per node, log2 steps over the network.
  return lat + log2i(s.ranks) * hop_latency(t, profile, LinkClass::Network, kPat, proto, tuner);
}

// Bandwidth fraction (wire = 1 / fraction) and busbw cap of (algo, proto), NCCL's refinements.
void bandwidth_of(const Table& t, const CostProfile& profile, const CommShape& s, int algo,
                  int proto, double& wire, double& cap_Bps) {
  const NcclParams& n = profile.nccl;
  const int arch = static_cast<int>(n.arch);
  const int ni = node_index(s.nodes);
  const int ll = ll_row(n, s.nodes);
  const double ch = n.channels;
  double frac = 1, cap = 0;  // cap in GB/s of busbw, 0 = none
  if (algo == kRing) {
    if (proto == kLL) {
      frac = (s.nodes > 1 || s.kind == CollKind::AllReduce) ? t.ring_ll_fraction_multi
                                                            : t.ring_ll_fraction_single;
      cap = t.ll_max_bw[ll][ni];
    } else if (proto == kLL128) {
      frac = s.ppn < 2 ? 0.7 : 0.92;
      cap = t.ring_ll128_per_channel[arch] * ch;
    }
  } else if (algo == kTree) {
    frac = 0.92 * t.tree_pattern_factor;
    cap = t.tree_per_channel[arch][ni] * ch;
    if (proto == kLL) {
      frac /= 3.8;
      cap = std::min(cap, t.ll_max_bw[ll][ni]);
    } else if (proto == kLL128) {
      frac *= s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
      cap = std::min(cap, t.tree_ll128_per_channel[arch][ni] * ch);
    }
  } else if (algo == kNvls) {
    frac = kTunerNvlsEfficiency;
  } else if (algo == kNvlsTree) {
    frac = 0.92;  // the inter-node tree's fraction; the NVLS part is priced in its pattern
  } else if (algo == kPat) {
    frac = 0.75;
  }
  wire = 1.0 / frac;
  cap_Bps = cap * 1e9;
}

// NCCL's default enablement of LL128 (tuning.cc, ncclTopoTuneModel: v2.18.3 and v2.21.5 alike,
// typeInter <= PATH_PXB || (minCompCap >= 90 && typeInter <= PATH_PXN); v2.30.7 with its default
// NCCL_LL128_C2C=1 the same for these path types): across nodes only when the graph's inter-node
// path type (the topology's, CommShape::type_inter) is at most PXB, or PXN on Hopper; inside a
// node only over NVLink (typeIntra <= PATH_NVB). One node's graphs have no NIC path.
bool ll128_enabled(const CostProfile& profile, const CommShape& s) {
  if (s.ppn > 1 && s.intra != LinkClass::NvLink) return false;
  if (s.nodes == 1) return true;
  const NicPath limit = profile.nccl.arch == GpuArch::Hopper ? NicPath::Pxn : NicPath::Pxb;
  return static_cast<int>(s.type_inter) <= static_cast<int>(limit);
}

bool allowed(const Table& t, const CostProfile& profile, const CommShape& s, int algo, int proto) {
  const bool agrs = s.kind == CollKind::AllGather || s.kind == CollKind::ReduceScatter;
  const bool ar = s.kind == CollKind::AllReduce;
  if (proto == kLL128 && !ll128_enabled(profile, s)) return false;
  switch (algo) {
    case kRing:
      return agrs || ar;
    case kTree:
      return ar && s.nodes > 1;
    case kNvls:
      return ar && s.nodes == 1 && s.ranks > 1 && profile.nccl.nvls &&
             s.intra == LinkClass::NvLink && proto == kSimple;
    case kNvlsTree:
      return ar && s.nodes > 1 && s.ppn > 1 && profile.nccl.nvls && s.intra == LinkClass::NvLink &&
             proto == kSimple;
    case kPat:
      return agrs && t.pat && s.ppn == 1 && s.nodes > 1 && proto == kSimple;
  }
  return false;
}

constexpr NcclAlgo kAlgoOf[kAlgos] = {NcclAlgo::Tree, NcclAlgo::Ring, NcclAlgo::Nvls,
                                      NcclAlgo::NvlsTree, NcclAlgo::Pat};
constexpr NcclProto kProtoOf[3] = {NcclProto::LL, NcclProto::LL128, NcclProto::Simple};

}  // namespace

const char* to_string(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::Auto:
      return "auto";
    case NcclAlgo::Ring:
      return "ring";
    case NcclAlgo::Tree:
      return "tree";
    case NcclAlgo::Nvls:
      return "nvls";
    case NcclAlgo::NvlsTree:
      return "nvlstree";
    case NcclAlgo::Pat:
      return "pat";
  }
  return "?";
}

const char* to_string(NcclProto p) {
  switch (p) {
    case NcclProto::Auto:
      return "auto";
    case NcclProto::LL:
      return "LL";
    case NcclProto::LL128:
      return "LL128";
    case NcclProto::Simple:
      return "Simple";
  }
  return "?";
}

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

NcclAlgo parse_nccl_algo(const std::string& s, const std::string& where) {
  const std::string l = lower(s);
  for (NcclAlgo a : {NcclAlgo::Auto, NcclAlgo::Ring, NcclAlgo::Tree, NcclAlgo::Nvls,
                     NcclAlgo::NvlsTree, NcclAlgo::Pat})
    if (l == to_string(a)) return a;
  throw InputError("<command line>", where,
                   fmt::format("unknown NCCL algorithm '{}' (known: ring, tree, nvls, nvlstree, "
                               "pat, auto; as NCCL_ALGO)",
                               s));
}

NcclProto parse_nccl_proto(const std::string& s, const std::string& where) {
  const std::string l = lower(s);
  for (NcclProto p : {NcclProto::Auto, NcclProto::LL, NcclProto::LL128, NcclProto::Simple})
    if (l == lower(to_string(p))) return p;
  throw InputError(
      "<command line>", where,
      fmt::format("unknown NCCL protocol '{}' (known: LL, LL128, Simple, auto; as NCCL_PROTO)", s));
}

CommShape comm_shape(const CollectiveOp& op, const Topology& topo) {
  CommShape s;
  s.kind = op.kind;
  const std::vector<int>& g = op.groups[0];
  s.ranks = static_cast<int>(g.size());
  const coll_detail::GroupLayout lay = coll_detail::layout_of(g, topo);
  s.nodes = static_cast<int>(lay.nodes.size());
  s.ppn = 0;
  s.type_inter = topo.nccl_type_inter();
  for (const auto& m : lay.members) s.ppn = std::max(s.ppn, static_cast<int>(m.size()));
  for (const auto& m : lay.members)
    if (m.size() > 1) {
      s.intra = coll_detail::hop_class(topo, m[0], m[1]);
      break;
    }
  return s;
}

double NcclChoice::time_s(double bytes, double pattern_s_per_byte, double busbw_factor) const {
  return latency_s + bytes * effective_wire(pattern_s_per_byte, busbw_factor) * pattern_s_per_byte;
}

double NcclChoice::capped_wire(double pattern_s_per_byte, double busbw_factor) const {
  if (!(cap_Bps > 0) || !(pattern_s_per_byte > 0)) return wire;
  return std::max(wire, busbw_factor / cap_Bps / pattern_s_per_byte);
}

double NcclChoice::effective_wire(double pattern_s_per_byte, double busbw_factor) const {
  return fill * capped_wire(pattern_s_per_byte, busbw_factor) / hw_bw_factor;
}

std::vector<NcclChoice> nccl_candidates(const CommShape& shape, const CostProfile& profile,
                                        double bytes, NcclAlgo algo, NcclProto proto,
                                        const std::string& where) {
  const Table& t = table_for(profile.nccl.version_code);
  std::vector<NcclChoice> out;
  for (int a = 0; a < kAlgos; ++a) {
    if (algo != NcclAlgo::Auto && kAlgoOf[a] != algo) continue;
    for (int p = 0; p < 3; ++p) {
      if (proto != NcclProto::Auto && kProtoOf[p] != proto) continue;
      if (!allowed(t, profile, shape, a, p)) continue;
      NcclChoice c;
      c.algo = kAlgoOf[a];
      c.proto = kProtoOf[p];
      c.pattern = a == kNvls       ? TrafficPattern::Nvls
                  : a == kNvlsTree ? TrafficPattern::NvlsTree
                                   : TrafficPattern::Ring;
      c.latency_s = latency_of(t, profile, shape, a, p, bytes, false);
      c.tuner_latency_s = latency_of(t, profile, shape, a, p, bytes, true);
      bandwidth_of(t, profile, shape, a, p, c.wire, c.cap_Bps);
      if (p == kLL128) c.hw_bw_factor = profile.nccl.ll128_efficiency;
      if (p == kLL && shape.nodes == 1) c.hw_bw_factor = profile.nccl.ll_intra_efficiency;
      if (a == kNvls) c.hw_bw_factor = profile.nccl.nvls_efficiency / kTunerNvlsEfficiency;
      if (a == kTree) {
        c.tuner_bw_factor = tree_correction(profile.nccl.version_code, p, bytes);
        c.fill = tree_fill(shape, profile.nccl.channels, p, bytes);
      }
      if (a == kNvls) c.fill = nvls_fill(shape, bytes);
      out.push_back(c);
    }
  }
  if (out.empty())
    throw InputError(where, "--algo",
                     fmt::format("NCCL cannot run {} over {} ranks on {} node(s) with algorithm {} "
                                 "and protocol {} under NCCL {} (profile '{}'{})",
                                 to_string(shape.kind), shape.ranks, shape.nodes, to_string(algo),
                                 to_string(proto), profile.nccl.version, profile.name,
                                 profile.nccl.nvls ? "" : ", no NVLS"));
  return out;
}

NcclChoice nccl_choose(const std::vector<NcclChoice>& candidates, double bytes,
                       const std::array<double, kTrafficPatterns>& pattern_s_per_byte,
                       double busbw_factor) {
  const NcclChoice* best = nullptr;
  double best_t = 0;
  for (const NcclChoice& c : candidates) {
    const double u = pattern_s_per_byte[static_cast<std::size_t>(c.pattern)];
    const double t =
        c.tuner_latency_s + bytes * c.capped_wire(u, busbw_factor) * u / c.tuner_bw_factor;
    if (!best || t < best_t) {
      best = &c;
      best_t = t;
    }
  }
  return *best;
}

double nccl_p2p_latency(const CostProfile& profile, double hop_latency_s, int node_peers,
                        int net_peers) {
  return profile.nccl.launch_s + table_for(profile.nccl.version_code).base[kRing][kSimple] * 1e-6 +
         hop_latency_s + node_peers * profile.nccl.p2p_peer_s +
         net_peers * profile.nccl.p2p_net_peer_s;
}

double p2p_small_message_s(const CollectiveOp& op, const Topology& topo,
                           const CostProfile& profile) {
  const NcclParams& n = profile.nccl;
  if (!(n.p2p_small_bytes > 0) || op.groups.empty()) return 0;
  const bool direct =
      op.kind == CollKind::AllToAll && select_algorithm(op, topo) == Algorithm::Direct;
  if (!direct && op.kind != CollKind::SendRecv) return 0;
  const std::vector<int>& first = op.groups.front();
  const double per_peer = direct ? op.bytes / static_cast<double>(first.size()) : op.bytes;
  if (!(per_peer < n.p2p_small_bytes)) return 0;
  // The busiest rank's network peers: its group's members on other nodes.
  std::size_t net_peers = 0;
  for (const std::vector<int>& g : op.groups.get())
    for (const std::vector<int>& on_node : coll_detail::layout_of(g, topo).members)
      net_peers = std::max(net_peers, g.size() - on_node.size());
  return static_cast<double>(net_peers) * n.p2p_small_net_peer_s;
}

bool is_nccl_collective(const CollectiveOp& op) {
  const bool kind = op.kind == CollKind::AllGather || op.kind == CollKind::ReduceScatter ||
                    op.kind == CollKind::AllReduce;
  return kind && (op.algorithm == Algorithm::Auto || op.algorithm == Algorithm::Ring ||
                  op.algorithm == Algorithm::IntraNode);
}

}  // namespace zerosim

namespace zerosim {

int nccl_kernel_channels(const CollectiveOp& op, const CostProfile& profile) {
  constexpr double kSimpleThreads = 512, kSimpleThreshold = 64;  // NCCL_SIMPLE_MAX_NTHREADS, ..
  int nc = std::max(1, static_cast<int>(std::lround(profile.nccl.channels)));
  while (nc >= 2 && op.bytes < nc * kSimpleThreads * kSimpleThreshold) --nc;
  return nc;
}

}  // namespace zerosim
