// Topology: a cluster as a graph of GPUs, NVSwitches, NICs, PCIe/leaf/spine switches and directed
// links. The Boost.Graph adjacency_list lives in topology_graph.hpp (private to sim/topology: only
// topology code includes it); everyone else sees flat link arrays and route(src, dst): a shortest
// path (by hop count, then latency), cached, with ECMP among equal-cost paths chosen by the
// destination only (D-mod-k, as InfiniBand routes). A duplex link is two directed links, one per
// direction, each with the full bandwidth.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/topology/nic_path.hpp"

namespace zerosim {

class FileCache;  // sim/core/file_cache.hpp

using LinkId = std::int32_t;

enum class NodeKind { Gpu, NvSwitch, Nic, PcieSwitch, LeafSwitch, SpineSwitch };
// Link class picks the per-hop latency and efficiency from the cost profile.
enum class LinkClass { NvLink, Pcie, Network };

const char* to_string(NodeKind k);
const char* to_string(LinkClass c);

struct LinkInfo {
  int from = -1, to = -1;    // vertex indices
  double bandwidth_Bps = 0;  // one direction
  double latency_s = 0;
  LinkClass cls = LinkClass::Network;
};

struct VertexInfo {
  NodeKind kind = NodeKind::Gpu;
  std::string name;  // unique, e.g. "n3.gpu7", "n3.nic1", "leaf2", "spine0"
  int node = -1;     // server index for in-server vertices, -1 for fabric switches
  int local = -1;    // local index within the server (GPU or NIC), -1 otherwise
};

struct Route {
  std::vector<LinkId> links;  // in order from src to dst
  double latency_s = 0;       // sum of link latencies
  bool crosses_nodes = false;
};

// What route_into returns besides the links.
struct RouteInfo {
  double latency_s = 0;
  bool crosses_nodes = false;
};

class TopologyGraph;  // wraps the boost::adjacency_list; see topology_graph.hpp

class Topology {
 public:
  Topology();
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  // --- description
  const std::string& name() const { return name_; }  // preset or file name
  const std::string& node_type() const {
    return node_type_;
  }  // "dgx2-v100", "dgx-a100", "dgx-h100", ...
  const std::string& gpu_model() const {
    return gpu_model_;
  }  // "V100-SXM3-32GB", "H100-SXM5-80GB", ...
  int gpu_count() const { return static_cast<int>(gpu_vertex_.size()); }
  int node_count() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int nics_per_node() const { return nics_per_node_; }
  double nic_Bps() const { return nic_Bps_; }
  // The cluster builder's parameters this topology was built from (empty for explicit graphs).
  // build_cluster is deterministic, so equal keys mean equal graphs: caches per fabric find a
  // rebuilt cluster by its key without comparing the graph.
  const std::string& builder_key() const { return builder_key_; }
  // The fabric the builder made ("rail" | "fat-tree"; "explicit" for a graph file) and its leaf
  // oversubscription (1 for rail and explicit graphs).
  const std::string& fabric() const { return fabric_; }
  double oversubscription() const { return oversubscription_; }
  // How a GPU reaches the NIC of its inter-node channels (NCCL's path type) and whether NCCL's PXN
  // can route around a far NIC through an NVLink peer (nic_path.hpp); nccl_type_inter() is the
  // graphs' typeInter NCCL's tuner reads.
  NicPath nic_path() const { return nic_path_; }
  bool pxn() const { return pxn_; }
  NicPath nccl_type_inter() const { return zerosim::nccl_type_inter(nic_path_, pxn_); }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }  // GPUs are numbered node-major
  int local_of(int gpu) const { return gpu % gpus_per_node_; }

  // --- graph
  int vertex_count() const { return static_cast<int>(vertices_.size()); }
  const VertexInfo& vertex(int v) const { return vertices_[v]; }
  int gpu_vertex(int gpu) const { return gpu_vertex_[gpu]; }
  int link_count() const { return static_cast<int>(links_.size()); }
  const LinkInfo& link(LinkId id) const { return links_[id]; }
  const std::vector<LinkInfo>& links() const { return links_; }

  // --- routing: GPU index to GPU index (not vertex). src != dst. Cached; thread-compatible (const
  // calls from one thread at a time per Topology object).
  const Route& route(int src_gpu, int dst_gpu) const;
  // The same route, its links appended to `out`, without caching the pair:
  // for ops that route millions of pairs once each, where a cache entry per pair cost more than
  // the walk it saves. It fills the same routing caches, so it is thread-compatible too.
  RouteInfo route_into(int src_gpu, int dst_gpu, std::vector<LinkId>& out) const;

  // --- symmetry. Block rotation: on the builders' clusters with full leaves, moving every GPU g to
  // (g + rotation_block_gpus()) mod gpu_count(), its server, NICs and leaves with it (spines stay),
  // maps every route to the route between the images (D-mod-k picks the same spine). Then a set of
  // flows invariant under the rotation needs only the flows from block 0 (GPUs [0, block)), each
  // on the block-0 images of its links (fold_link): every link of an orbit carries the same load,
  // and each orbit of flows has one member leaving block 0 (sim/net/flow_network.hpp, folding).
  // 0 when the cluster has no such symmetry (explicit topologies, partial leaves, one leaf).
  int rotation_block_gpus() const { return rotation_block_gpus_; }
  int rotation_blocks() const {
    return rotation_block_gpus_ > 0 ? gpu_count() / rotation_block_gpus_ : 1;
  }
  LinkId fold_link(LinkId id) const { return fold_link_[static_cast<std::size_t>(id)]; }

  // Graphviz DOT via boost::write_graphviz.
  std::string to_dot() const;
  // One-paragraph human summary (counts per kind, link classes and bandwidths).
  std::string summary() const;

 private:
  friend class TopologyBuilder;
  std::string name_, node_type_, gpu_model_;
  int nodes_ = 0, gpus_per_node_ = 0, nics_per_node_ = 0;
  double nic_Bps_ = 0;
  std::vector<VertexInfo> vertices_;
  std::vector<LinkInfo> links_;
  std::vector<int> gpu_vertex_;
  std::unique_ptr<TopologyGraph> graph_;
  mutable std::unique_ptr<struct RouteCache> cache_;
  int rotation_block_gpus_ = 0;
  std::vector<LinkId> fold_link_;  // per link, when rotation_block_gpus_ > 0
  std::string builder_key_;
  std::string fabric_ = "explicit";
  double oversubscription_ = 1;
  NicPath nic_path_ = NicPath::Pxb;
  bool pxn_ = false;
};

// The router's ECMP rule is destination-based (D-mod-k), like InfiniBand's fat-tree routing, where
// switches forward by destination LID only (see topology_route.cpp). route_dest_key(t, dst) is the
// number of dst's port, numbered like LIDs: the in-server vertices that fabric switches deliver to
// (NICs, or GPUs sitting on the fabric), switch by switch in vertex order and, per switch, in link
// order; dst's port is the one its traffic enters the server by (its GPU index when the fabric does
// not reach it). The walk from any src to dst starts with key = route_dest_key(dst); a vertex with
// k > 1 equal-cost next hops takes the (key % k)-th in out-edge order and the walk continues with
// key / k (one base-k digit per level). On the builders' fabrics the only choice is the spine at
// the source leaf (see topology_build.cpp). Shortcuts that predict routes use this
// (sim/net/analytic_shortcuts.cpp).
std::uint64_t route_dest_key(const Topology& t, int dst_gpu);

// Parameters of the cluster builders. Every field is validated by build_cluster (InputError naming
// it).
struct ClusterSpec {
  std::string name;       // for messages and reports
  std::string node_type;  // "dgx2-v100" | "dgx-a100" | "dgx-h100" | "dgx-h200"
  int nodes = 1;
  int nics_per_node = -1;         // -1: the node type's default
  double nic_gbps = -1;           // -1: the node type's default line rate per NIC (Gbit/s)
  std::string fabric = "rail";    // "rail" (rail-optimized) | "fat-tree" (two-level leaf/spine)
  double oversubscription = 1.0;  // leaf down:up bandwidth ratio, >= 1
  std::string nic_path;           // "PIX" | "PXB" | "PHB" | "SYS"; empty: the node type's
  int pxn = -1;                   // 0 | 1; -1: the node type's (see Topology::pxn)
};

// Builds a validated cluster graph. Throws InputError(file, field, rule) on bad parameters.
Topology build_cluster(const ClusterSpec& spec, const std::string& source_file = "<command line>");

// Loads a topology file: either {"builder": {...ClusterSpec fields...}} or an explicit graph
// {"name", "gpu_model", "gpus_per_node", "nodes": [...], "links": [...], optional "nic_path"
// (PXB when absent) and "pxn" (false)}; validated (unknown nodes,
// disconnected GPUs, non-positive bandwidth -> InputError with file and JSON path).
Topology load_topology_file(const std::string& path);

// --cluster NAME|FILE plus optional command-line overrides (<=0 / empty = keep the preset's value).
struct ClusterOverrides {
  int nodes = 0;
  int nics_per_node = 0;
  double nic_gbps = 0;
  std::string fabric;
  double oversubscription = 0;
  // > 0: a cluster of more GPUs is refused (InputError naming --nodes and `max_gpus_of`, e.g. "the
  // flow tier") before a builder preset is built, so that a run too large to finish fails at once.
  int max_gpus = 0;
  std::string max_gpus_of = {};
  // > 0: the limit, below max_gpus, of a cluster that the tiers cannot fold on a block rotation
  // (a builder cluster with a partial leaf block, an explicit graph): every node is simulated.
  int max_unfolded_gpus = 0;
};
// `files`: the file parsed once per distinct content there; null: read and parsed afresh.
Topology load_cluster(const std::string& name_or_file, const ClusterOverrides& overrides = {},
                      FileCache* files = nullptr);

}  // namespace zerosim
