// NCCL's tuning model: which algorithm and protocol NCCL runs a collective with, and what that
// choice costs. Structure and constants follow NCCL's src/graph/tuning.cc (see
// ../shared/data/nccl-tuning-model.md and docs/collective-model.md): a choice (algorithm, protocol)
// costs   time = launch + base latency + per-hop latencies of its steps
//                + bytes x (link-limited seconds per byte of its traffic) x wire factor,
// where the link-limited part comes from the cluster's links (both network tiers route the traffic
// pattern: ring or NVLS), the wire factor is the protocol's and algorithm's bandwidth fraction
// (LL moves 4 payload bytes in 8, LL128 120 in 128, a tree reaches 0.92 of a ring, ...) raised to
// NCCL's per-channel and absolute bandwidth caps. NCCL picks the choice its model predicts fastest;
// so does this model, among the same candidates (forced ones as NCCL_ALGO / NCCL_PROTO do).
// The constants that differ between NCCL releases are tables selected by the profile's
// nccl.version; the per-hop latencies per link class and protocol, the link efficiencies, the
// launch overhead and the NVLS efficiency are profile parameters (fitted by `calibrate fit`).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace zerosim {

const char* to_string(NcclAlgo a);
const char* to_string(NcclProto p);
NcclAlgo parse_nccl_algo(const std::string& s, const std::string& where);  // InputError if unknown
NcclProto parse_nccl_proto(const std::string& s,
                           const std::string& where);  // InputError if unknown

// What NCCL's tuner sees of a communicator: op, ranks, nodes, ranks per node, the intra-node link,
// and the inter-node graphs' path type from a GPU to its NIC (typeInter: the topology's
// nccl_type_inter()).
struct CommShape {
  CollKind kind = CollKind::AllReduce;
  int ranks = 0;
  int nodes = 1;
  int ppn = 1;  // ranks per node (the largest count on one node)
  LinkClass intra = LinkClass::NvLink;
  NicPath type_inter = NicPath::Pxb;
};
// The shape of one group of op (groups of one op have equal shapes in every caller).
CommShape comm_shape(const CollectiveOp& op, const Topology& topo);

// One candidate (algorithm, protocol) with its cost terms.
struct NcclChoice {
  NcclAlgo algo = NcclAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  TrafficPattern pattern = TrafficPattern::Ring;
  double latency_s = 0;        // launch + base + hops (for the size the choice was made at);
                               // NVLS adds its chunks' synchronization (nccl.nvls_chunk_s)
  double tuner_latency_s = 0;  // the same with NCCL's own table hop latencies: what NCCL's tuner
                               // predicts, and so what it chooses by
  double wire = 1;             // multiplies the pattern's link-limited seconds per byte (>= 1)
  double cap_Bps = 0;          // NCCL's bandwidth cap on busbw for this choice; 0 = none
  double tuner_bw_factor = 1;  // NCCL's tuner-only bandwidth correction (treeCorrectionFactor):
                               // what NCCL chooses by, not what the links deliver
  double fill = 1;  // >= 1: a pipeline's fill when the buffer spans few chunks: a tree's across
                    // its network levels, (k + levels - 1) / k; NVLS's three stages, (k + 2) / k;
                    // NCCL's tuner assumes 1
  double hw_bw_factor = 1;  // the achieved bandwidth / what NCCL's tuner assumes (LL128:
                            // nccl.ll128_efficiency; LL inside a node: ll_intra_efficiency;
                            // NVLS: nvls_efficiency / 0.85): the time, not the choice
  // time(bytes) given the pattern's link-limited seconds per byte of the op's size.
  double time_s(double bytes, double pattern_s_per_byte, double busbw_factor) const;
  // The wire factor with the cap and the fill folded in: the flow tier scales flow bytes by it.
  double effective_wire(double pattern_s_per_byte, double busbw_factor) const;
  // The same without the fill: what NCCL's tuner assumes.
  double capped_wire(double pattern_s_per_byte, double busbw_factor) const;
};

// The candidates NCCL considers for shape under profile, restricted to `algo` / `proto` unless
// Auto, each with its latency at `bytes` (ring all-reduce's latency grows past NCCL's plateau
// size). Throws InputError (where = flag or op label) when a forced choice cannot run the op, as
// NCCL refuses an algorithm it cannot use.
std::vector<NcclChoice> nccl_candidates(const CommShape& shape, const CostProfile& profile,
                                        double bytes, NcclAlgo algo = NcclAlgo::Auto,
                                        NcclProto proto = NcclProto::Auto,
                                        const std::string& where = "<collective>");

// The candidate NCCL's tuner picks: the fastest by NCCL's own latency constants
// (tuner_latency_s) and the patterns' link-limited seconds per byte (index by TrafficPattern; a
// pattern the candidates do not use may be 0). It is then priced with the profile's latencies:
// NCCL chooses by its model, the hardware decides the time.
NcclChoice nccl_choose(const std::vector<NcclChoice>& candidates, double bytes,
                       const std::array<double, kTrafficPatterns>& pattern_s_per_byte,
                       double busbw_factor);

// Latency of a grouped point-to-point exchange (all_to_all, send_recv, each hop of two_hop) whose
// busiest rank has `node_peers` peers on its own node and `net_peers` across the network:
// launch + Simple ring base latency + the slowest hop + node_peers x p2p_peer + net_peers x
// p2p_net_peer (the proxy thread posts and progresses every network peer's transfers in turn).
double nccl_p2p_latency(const CostProfile& profile, double hop_latency_s, int node_peers,
                        int net_peers);

// The small-message path's extra time of op (p2p_small_bytes, p2p_small_net_peer_s): a direct
// all_to_all or a send_recv whose message per peer is below the threshold pays the extra per
// network peer of its busiest rank; 0 for everything else and for profiles without the path.
double p2p_small_message_s(const CollectiveOp& op, const Topology& topo,
                           const CostProfile& profile);

// Is op one NCCL prices by (algorithm, protocol): all_gather, reduce_scatter or all_reduce lowered
// as NCCL's own collective (algorithm auto, ring or intra_node), not a zerosim composition.
bool is_nccl_collective(const CollectiveOp& op);

// The channels, one thread block each, of the kernel NCCL launches for `op` (its grid is the
// plan's channel count, enqueue.cc): the profile's nccl.channels, cut for a small buffer as
// getAlgoInfo's ring/tree channel tuning does (enqueue.cc, 2.18.3: while nBytes < nc * nt *
// threadThreshold, nc--; SIMPLE's nt = 512 threads and threshold 64 B, so 32 KiB per channel).
// op.bytes is NCCL's nBytes (nccl-tests' convention). At least 1.
int nccl_kernel_channels(const CollectiveOp& op, const CostProfile& profile);

}  // namespace zerosim
