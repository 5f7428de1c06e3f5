// Collectives over rank groups, lowered to phases of (src, dst, bytes) flows on the topology.
// A CollectiveOp carries every group that runs it at the same moment (e.g. one intra-node
// all-gather per node), so the network sees the whole cluster's traffic and contention is modelled.
// Byte convention is nccl-tests': all_gather = total output bytes per rank; reduce_scatter = total
// input bytes per rank; all_reduce = buffer bytes; all_to_all = total bytes each rank sends
// (including its own slice); send_recv = bytes sent by each sender (groups are [src, dst] pairs).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/collectives/group_list.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

enum class CollKind { AllGather, ReduceScatter, AllReduce, AllToAll, SendRecv };
enum class Algorithm {
  Ring,            // NCCL's pipelined ring (one long-lived flow per neighbour, (n-1) hop latencies)
  Hierarchical,    // intra-node phase, then inter-node phase over rails (for AG/RS/AR)
  Direct,          // direct all-to-all (every pair)
  TwoHopAllToAll,  // intra-node all-to-all, then all-to-all among same-local-index GPUs across
                   // nodes
  IntraNode,       // group lies inside one node; ring over NVLink/NVSwitch
  Auto,            // the selector picks (see select_algorithm)
};

// NCCL's algorithms and protocols (nccl_model.hpp), forced per op as NCCL_ALGO / NCCL_PROTO do;
// Auto lets the model choose as NCCL's tuner does.
enum class NcclAlgo { Auto, Ring, Tree, Nvls, NvlsTree, Pat };
enum class NcclProto { Auto, LL, LL128, Simple };

const char* to_string(CollKind k);
const char* to_string(Algorithm a);
CollKind parse_coll_kind(const std::string& s, const std::string& where);  // InputError if unknown
// A collective named on the command line (--op): parse_coll_kind's names, or nccl-tests' and
// NCCL's spellings without the underscore (allgather, reducescatter, allreduce, alltoall,
// sendrecv: nccl-tests' alltoall_perf, sendrecv_perf; NCCL's ncclAllReduce...).
CollKind parse_coll_op(const std::string& s, const std::string& where);
Algorithm parse_algorithm(const std::string& s, const std::string& where);  // InputError if unknown

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor(n).
double busbw_factor(CollKind k, int n);

struct CollectiveOp {
  CollKind kind = CollKind::AllGather;
  Algorithm algorithm = Algorithm::Auto;
  GroupList groups;   // GPU indices; all groups run concurrently (shared, immutable)
  double bytes = 0;   // per-group size in nccl-tests' convention (see above)
  std::string label;  // for messages (lower_collective's errors); lowered steps keep op names in
                      // the StepProgram (OpLabel) and leave this empty
  NcclAlgo nccl_algo = NcclAlgo::Auto;     // forced NCCL algorithm (NCCL's own collectives only)
  NcclProto nccl_proto = NcclProto::Auto;  // forced NCCL protocol
};

struct Flow {
  int src_gpu = -1, dst_gpu = -1;
  double bytes = 0;
  // Flows this one stands for (flow tier, folding): a block-0 source's flow into block 1 of a
  // folded direct exchange stands for its images into blocks 1 .. B-1, which cross the same folded
  // links with the same bytes (PhaseBuilder::add_images).
  int images = 1;
};

// A phase starts after the previous one completes; its flows start together after latency_s.
struct Phase {
  double latency_s = 0;
  std::vector<Flow> flows;
  bool distinct_pairs = false;  // no two flows share (src, dst): the lowering merged them
  double wire = 1;  // time per payload byte relative to the links' rate (grouped point-to-point
                    // reaches nccl.p2p_efficiency of what a ring does)
};

struct CollectivePlan {
  std::vector<Phase> phases;
};

Algorithm select_algorithm(const CollectiveOp& op, const Topology& topo);

// The traffic a choice of NCCL's puts on the links (nccl_model.hpp): NCCL's ring (also priced for
// tree and PAT, which move the same bytes per link to within (n-1)/n); NVLink SHARP's exchange
// inside a node (every GPU sends and receives the buffer once); NVLS tree: NVLS inside the nodes
// and the ring's network load between them (the slower of the two; lowered as the ring).
enum class TrafficPattern { Ring, Nvls, NvlsTree };
constexpr int kTrafficPatterns = 3;

// Lowers op's traffic to phases of flows. NCCL's own collectives (is_nccl_collective) get the
// pattern's flows with no latency: the network tiers add NCCL's latency and bandwidth factors of
// the choice (nccl_model.hpp). zerosim's compositions (hierarchical, direct, two_hop, send_recv)
// carry NCCL's latency per stage.
CollectivePlan lower_pattern(const CollectiveOp& op, const Topology& topo,
                             const CostProfile& profile, TrafficPattern pattern,
                             int source_limit = std::numeric_limits<int>::max());
// lower_pattern's ring, with NCCL's Ring/Simple latency at op's size on NCCL's own collectives (the
// tiers choose the protocol; this is the plain lowering for tests and one-off plans).
// source_limit: only the flows from GPUs below it (the flow tier's folding keeps block 0 of a
// rotation-invariant op, see Topology::rotation_block_gpus). A direct exchange then routes only
// those sources, and its latency, the largest over its pairs, is taken over them: equal under the
// rotation, which maps pairs to pairs with the same route latency.
CollectivePlan lower_collective(const CollectiveOp& op, const Topology& topo,
                                const CostProfile& profile,
                                int source_limit = std::numeric_limits<int>::max());
// The most flows one phase of lower_collective(op) holds, counted without lowering (an all-to-all
// routes every ordered pair of a group: sum n(n-1), per hop for two_hop; rings n per group; PXN
// relays not counted). Lets the flow tier refuse an op that cannot fit in memory before it starts.
std::uint64_t max_phase_flows(const CollectiveOp& op, const Topology& topo);

// One collective step's start-up latency from src to dst, as every lowering charges it: the
// profile's per-hop alpha of the link class the hop uses (Network when the route leaves the node)
// plus the route's wire latency. For shortcuts that price pairs without lowering them
// (sim/net/analytic_shortcuts.cpp).
double hop_latency_s(const Topology& topo, const CostProfile& profile, int src, int dst);
// A group's members node by node: distinct nodes in order of first appearance, per node its
// members in group order.
std::vector<std::vector<int>> members_by_node(const std::vector<int>& group, const Topology& topo);

// Convenience groups.
std::vector<std::vector<int>> world_group(const Topology& topo);  // one group of every GPU
std::vector<std::vector<int>> intra_node_groups(const Topology& topo,
                                                int group_size);  // consecutive
std::vector<std::vector<int>> rail_groups(const Topology& topo);  // same local index across nodes

}  // namespace zerosim
