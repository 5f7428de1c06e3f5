// Building blocks shared by the collective lowerings: per-hop latency, a phase builder that merges
// flows with the same (src, dst), a group's layout over nodes, and the pipelined ring (NCCL-style,
// multi-channel across nodes) and direct all-to-all emitters. Private to sim/collectives
// (PRIVATE_HEADERS in sim/CMakeLists.txt: the layer check fails the build when another module
// includes it, and it is not installed); other modules use hop_latency_s and members_by_node
// (collective.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace zerosim::coll_detail {

// Latency of one collective step from src to dst: the profile's per-hop alpha of the link class the
// hop uses (Network when the route leaves the node) plus the route's wire latency.
struct Hop {
  LinkClass cls = LinkClass::NvLink;
  double latency_s = 0;
};
Hop hop(const Topology& topo, const CostProfile& profile, int src, int dst);
// The link class a step from src to dst uses (Network when the route leaves the node).
LinkClass hop_class(const Topology& topo, int src, int dst);

// Accumulates one phase. Flows with the same (src, dst) are merged (equal-path flows that start
// together finish together under max-min sharing, so the merge changes no completion time).
class PhaseBuilder {
 public:
  // Keeps only flows from GPUs below source_limit (lower_collective's folding); add() drops others.
  explicit PhaseBuilder(int source_limit = std::numeric_limits<int>::max())
      : source_limit_(source_limit) {}
  int source_limit() const { return source_limit_; }
  void add(int src, int dst, double bytes) { add_images(src, dst, bytes, 1); }
  // A flow standing for `images` flows (Flow::images); merged only with flows of as many images.
  void add_images(int src, int dst, double bytes, int images);
  // Room for `more` flows beyond those added so far (saves rehashing on 10^7-flow phases). Grows
  // geometrically: callers reserve once per group, and reserving exactly would reallocate and
  // rehash on every one of a phase's thousands of small groups.
  void reserve_more(std::size_t more);
  void raise_latency(double s) { latency_s_ = std::max(latency_s_, s); }
  void set_wire(double w) { wire_ = w; }
  bool empty() const { return flows_.empty(); }
  Phase take();

 private:
  int source_limit_;
  double latency_s_ = 0;
  double wire_ = 1;
  std::vector<Flow> flows_;
  // (src << 32 | dst, bit 31 set for a flow of several images) -> flow
  std::unordered_map<std::uint64_t, std::size_t> index_;
};

// A group seen node by node: distinct nodes in order of first appearance, and per node its members
// in group order. Regular = every node holds the same local GPU indices in the same order.
struct GroupLayout {
  std::vector<int> nodes;
  std::vector<std::vector<int>> members;
  bool regular = true;
  int per_node() const { return members.empty() ? 0 : static_cast<int>(members[0].size()); }
};
GroupLayout layout_of(const std::vector<int>& group, const Topology& topo);

// Bytes each ring edge carries, per byte of the op's size: (n-1)/n, all-reduce 2(n-1)/n.
double ring_edge_fraction(CollKind kind, int n);

// Emits one group's pipelined ring into pb (all edges concurrent, one long-lived flow each). Its
// latency is NCCL's (nccl_model.hpp), added by the caller.
void add_ring(PhaseBuilder& pb, CollKind kind, const std::vector<int>& group, double bytes,
              const Topology& topo);

// The hops of one point-to-point transfer (one, or two through a PXN relay): each hop's link class
// and route wire latency. Its latency under a profile is the sum of the hops' (class alpha + wire).
struct TransferHops {
  int count = 0;
  std::array<LinkClass, 2> cls{};
  std::array<double, 2> route_latency_s{};
  double latency_s(const CostProfile& profile) const;
};

// Emits one point-to-point transfer and returns its hops. Like NCCL's PXN, a transfer between
// nodes whose route would cross rails through a spine goes first over NVLink to the source node's
// GPU on the destination's rail (same local index), then over that rail: two flows of the same
// bytes.
// images > 1 (a folded transfer standing for its images, Flow::images) requires a one-hop
// transfer: src and dst on the same rail.
TransferHops add_transfer_hops(PhaseBuilder& pb, int src, int dst, double bytes,
                               const Topology& topo, int images = 1);
// The same, returning the transfer's latency under profile.
double add_transfer(PhaseBuilder& pb, int src, int dst, double bytes, const Topology& topo,
                    const CostProfile& profile);

// Per node of a group (in node order): its members' peers on the same node and across the network.
std::vector<std::pair<int, int>> peers_per_node(const std::vector<int>& group,
                                                const Topology& topo);
// The busiest rank's (node peers, network peers) under profile: the node whose peers cost most
// (p2p_peer_s and p2p_net_peer_s each), the first such node on a tie.
std::pair<int, int> busiest_peers(const std::vector<std::pair<int, int>>& per_node,
                                  const CostProfile& profile);

// Emits a direct exchange (through add_transfer): every ordered pair (i != j) of the group gets
// bytes_per_pair; latency is NCCL's grouped point-to-point latency over the slowest pair's hop.
// Folded (pb keeps block 0's sources of a cluster with a block rotation of three or more blocks),
// a group of one rail that repeats one block's members in every block (folded_repeat) gets, per
// block-0 source, its transfers into blocks 0 and 1 only, each into block 1 standing for its
// images into blocks 1 .. B-1: on the builders' two-level fabrics the block rotation fixes the
// spines and keeps D-mod-k's spine choice, so the folded routes from a block-0 source to d + cB
// (c >= 1) are one link list with one latency and hop class (topology.hpp, block rotation).
void add_direct_exchange(PhaseBuilder& pb, const std::vector<int>& group, double bytes_per_pair,
                         const Topology& topo, const CostProfile& profile);

}  // namespace zerosim::coll_detail
