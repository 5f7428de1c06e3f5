// TopologyGraph: the Boost.Graph adjacency_list behind a Topology, plus what the router
// precomputes. Private to sim/topology (PRIVATE_HEADERS in sim/CMakeLists.txt: the layer check
// fails the build when another module includes it, and it is not installed). Vertex and edge
// indices equal Topology's flat arrays (LinkId = edge index). Path cost is one int64 per link,
// kHopCost + latency in picoseconds, so that shortest paths compare by hop count first and by total
// latency second, exactly (no floating-point ties).
#pragma once
#include <boost/container/small_vector.hpp>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/topology/small_edge_lists.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

struct VertexProps {
  NodeKind kind = NodeKind::Gpu;
  int node = -1;
};
struct EdgeProps {
  LinkId id = -1;
  std::int64_t cost = 0;
};
// Edge list in a vector (not the default std::list): one allocation for 10^5-10^6 links. Per-vertex
// edge lists hold two edges in place (small_edge_lists.hpp).
using Graph = boost::adjacency_list<SmallVecS, boost::vecS, boost::bidirectionalS, VertexProps,
                                    EdgeProps, boost::no_property, boost::vecS>;

constexpr std::int64_t kHopCost = std::int64_t{1}
                                  << 40;  // > any path's summed latency (1.1 s in ps)
constexpr std::int64_t kInfCost = std::numeric_limits<std::int64_t>::max() / 4;
constexpr double kMaxLinkLatencyS =
    1e-3;  // validated bound that keeps summed latencies below kHopCost

std::int64_t link_cost(double latency_s);

class TopologyGraph {
 public:
  TopologyGraph(std::size_t vertices, std::size_t fabric_vertices);

  Graph g;  // all vertices and directed links

  // Fabric-only subgraph (vertices with node == -1) for per-leaf distance fields.
  Graph fabric;
  std::vector<int> fabric_index;   // vertex -> index in `fabric`, -1 for in-server vertices
  std::vector<int> fabric_vertex;  // index in `fabric` -> vertex

  std::vector<char> is_gpu;  // per vertex, compact copy of kind == Gpu for the router's inner loop
  std::vector<std::uint32_t> dest_key;  // per GPU index: route_dest_key

  // Decomposition used by the fast router (see topology_route.cpp). Valid when `decomposable`.
  bool decomposable = false;
  std::vector<int> attach;              // border vertex -> its only fabric neighbor, else -1
  std::vector<std::int64_t> up_cost;    // border -> attach, cheapest link (kInfCost if none)
  std::vector<std::int64_t> down_cost;  // attach -> border, cheapest link (kInfCost if none)
  std::vector<int> slot;                // in-server vertex -> index among its node's vertices
  std::vector<int> node_begin;          // node n's vertices: node_vertices[node_begin[n] .. n+1)
  std::vector<int> node_vertices;

  // The block rotation (Topology::rotation_block_gpus) on the fabric, when the topology has one,
  // or the fabric's own rotation where the servers break the block rotation (add_fabric_rotation):
  // `rotation_blocks` blocks (0: none); per fabric index its block (-1: a vertex the rotation
  // fixes, a spine) and where its orbit starts in `fabric_orbit`, which lists the orbit's members
  // by block. The rotation is an automorphism of the fabric with its link costs, so the distance
  // field to a vertex of block c is the field to its block-0 image read at the rotated vertices
  // (rotate_fabric), and the router computes fields for block-0 targets only.
  int rotation_blocks = 0;
  std::vector<int> fabric_block, fabric_orbit_at, fabric_orbit;
  // Fabric index of fi's image after `shift` blocks (0 <= shift < rotation_blocks).
  int rotate_fabric(int fi, int shift) const {
    const int b = fabric_block[static_cast<std::size_t>(fi)];
    if (b < 0) return fi;
    const int c = b + shift < rotation_blocks ? b + shift : b + shift - rotation_blocks;
    const int at = fabric_orbit_at[static_cast<std::size_t>(fi)] + c;
    return fabric_orbit[static_cast<std::size_t>(at)];
  }

  // Description kept for summary().
  std::string fabric_name;  // "rail", "fat-tree" or "explicit"
  double oversubscription = 1.0;
};

// Memoised routing state; mutable behind Topology::route (thread-compatible, not thread-safe).
// The rest of a route from a fabric vertex it reaches: under destination-based routing it depends
// only on (that vertex, dst, the D-mod-k key left), so the sources below one leaf share it.
struct SuffixKey {  // vertex: a fabric vertex; dst: a GPU index
  int vertex, dst;
  std::uint64_t key;
  bool operator==(const SuffixKey&) const = default;
};
struct SuffixKeyHash {
  std::size_t operator()(const SuffixKey& k) const {
    std::uint64_t h = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.vertex)) << 32 |
                       static_cast<std::uint32_t>(k.dst)) *
                      0x9e3779b97f4a7c15ULL;
    h ^= k.key + 0xbf58476d1ce4e5b9ULL + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
// A suffix's links are pool[begin, begin + count).
struct RouteSuffix {
  std::int64_t begin = 0;
  std::int32_t count = -1;         // -1: empty slot
  int min_node = 0, max_node = 0;  // of the vertices it reaches (for crosses_nodes)
  std::uint64_t key = 0;           // the D-mod-k key left at the vertex (flat slots)
};
// Suffixes by (fabric vertex, dst): a flat slot per pair from 1024 GPUs while fabric vertices x
// GPUs is at most 4M (an all-to-all looks one up per routed pair; hashing 2M entries cost a fifth
// of its time), the rest hashed. Memory is bounded: the table empties itself when its link pool
// gets large.
class SuffixTable {
 public:
  const RouteSuffix* find(const SuffixKey& k, int fabric_index) const;
  void insert(const SuffixKey& k, int fabric_index, std::span<const LinkId> links, int min_node,
              int max_node);
  std::span<const LinkId> links(const RouteSuffix& s) const {
    return {pool_.data() + s.begin, static_cast<std::size_t>(s.count)};
  }
  void configure(int fabric_vertices, int gpus);
  static constexpr std::size_t kMaxFlatSlots = std::size_t{1} << 22;
  static constexpr std::size_t kMinFlatGpus = 1024;

 private:
  static constexpr std::size_t kMaxPoolLinks = std::size_t{1} << 25;
  RouteSuffix* flat_slot(const SuffixKey& k, int fabric_index);
  std::size_t gpus_ = 0;
  std::vector<RouteSuffix> flat_;  // [fabric_index * gpus + dst], when configured small
  std::unordered_map<SuffixKey, RouteSuffix, SuffixKeyHash> hashed_;
  std::vector<LinkId> pool_;
};

struct RouteCache {
  std::unordered_map<std::uint64_t, Route> routes;  // (src gpu, dst gpu) -> route
  SuffixTable suffixes;                             // route_fast's walks
  std::unordered_map<int, std::vector<std::int64_t>>
      fabric_fields;  // fabric target -> dist (fabric idx); entries never move (node-based map)
  // Per dst GPU, the fast router's entries into it from the fabric: the field of the fabric vertex
  // above a border of dst (with a block rotation: of its block-0 image, read at vertices rotated
  // back by `shift` blocks) and the cost attach -> border -> dst. Empty until first used
  // (`entries_ready`).
  struct FabricEntry {
    const std::vector<std::int64_t>* field;
    std::int64_t tail;
    int shift;  // blocks the field's vertices are rotated by before reading (0: as they are)
  };
  using FabricEntries = boost::container::small_vector<FabricEntry, 2>;
  std::vector<FabricEntries> entries;
  std::vector<char> entries_ready;
  // Servers with the same in-server subgraph (vertex kinds, links and costs by slot) share one
  // subgraph and one distance field per destination slot: node_shape[n] is the first such node.
  std::vector<int> node_shape;
  std::unordered_map<int, Graph> node_graphs;  // shape's node -> its in-server subgraph
  // (shape's node << 32 | dst slot) -> dist by slot
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> interior_fields;
  std::unordered_map<int, std::vector<std::int64_t>> full_fields;  // fallback: dst vertex -> dist
};

// Assembles a Topology (the friend of Topology that may set its private fields).
class TopologyBuilder {
 public:
  TopologyBuilder(std::string name, std::string node_type, std::string gpu_model,
                  int gpus_per_node);
  void reserve(std::size_t vertices, std::size_t directed_links);
  int add_vertex(NodeKind kind, std::string name, int node, int local);
  // Adds one directed link, or two (one per direction, each with full bandwidth) when duplex.
  void add_link(int from, int to, double bandwidth_Bps, double latency_s, LinkClass cls,
                bool duplex);
  void set_nics(int per_node, double nic_Bps);
  void set_fabric(std::string fabric, double oversubscription);
  // Records a block rotation (see Topology::rotation_block_gpus) on a finished topology.
  static void set_rotation(Topology& t, int block_gpus, std::vector<LinkId> fold_link) {
    t.rotation_block_gpus_ = block_gpus;
    t.fold_link_ = std::move(fold_link);
  }
  // Records the rotation's action on the fabric (TopologyGraph::rotation_blocks and the orbits).
  static TopologyGraph& graph_to_edit(Topology& t) { return *t.graph_; }
  // Records the builder parameters a finished topology comes from (Topology::builder_key).
  static void set_builder_key(Topology& t, std::string key) { t.builder_key_ = std::move(key); }
  static void set_fabric(Topology& t, std::string fabric, double oversubscription) {
    t.fabric_ = std::move(fabric);
    t.oversubscription_ = oversubscription;
  }
  static void set_nic_path(Topology& t, NicPath path, bool pxn) {
    t.nic_path_ = path;
    t.pxn_ = pxn;
  }
  // Builds the Boost graph and routing precomputation. GPUs are numbered by (node, local); callers
  // have validated that every node 0..N-1 holds gpus_per_node GPUs with locals 0..gpus_per_node-1.
  Topology finish();

  static const TopologyGraph& graph(const Topology& t) { return *t.graph_; }
  static RouteCache& cache(const Topology& t);

 private:
  Topology t_;
  std::string fabric_ = "explicit";
  double oversubscription_ = 1.0;
};

// The builders' candidate block rotation (Topology::rotation_block_gpus): per vertex its block
// (-1 for the spines, which stay) and its image in block 0. add_block_rotation records it on t if
// it holds: the spine choice (D-mod-k key modulo `spines`) is invariant, and every link's image
// exists with the same bandwidth, latency and class. Otherwise t keeps no rotation.
struct RotationLayout {
  int block_gpus = 0;
  std::uint32_t spines = 0;
  std::vector<int> block_of, rep_of;  // per vertex
};
void add_block_rotation(Topology& t, const RotationLayout& lay);
// The rotation of the fabric alone, by `blocks` blocks of the layout's fabric vertices (block_of
// and rep_of read at fabric vertices only): recorded as TopologyGraph::rotation_blocks and the
// orbits when t has none yet and it is an automorphism of the fabric subgraph with its link costs
// (a partial leaf's thinner uplinks cost the same: costs are latencies). It serves the router's
// distance fields only; Topology::rotation_blocks() stays 1, so nothing is folded.
void add_fabric_rotation(Topology& t, const RotationLayout& lay, int blocks);

// Plain shortest path by reverse Dijkstra over the whole graph (no cache, no decomposition). The
// reference that Topology::route must equal; used by tests and by the router's fallback.
Route route_reference(const Topology& topo, int src_gpu, int dst_gpu);

// route_dest_key(t, dst), the router's D-mod-k key, is public: see topology.hpp.

// dist[v] = cheapest path cost v -> target (kInfCost if none); GPUs other than target are not
// transit.
std::vector<std::int64_t> distance_field_to(const Graph& g, std::size_t target);

struct NodeTypeSpec;  // node_types.hpp

// Where a ClusterSpec field came from, for error messages: (file, JSON path or flag).
using FieldLocator = std::function<std::pair<std::string, std::string>(const std::string& field)>;
Topology build_cluster_located(const ClusterSpec& spec, const FieldLocator& where);
// The checks build_cluster_located makes of a spec's fields, without building: its node type.
const NodeTypeSpec& check_cluster_spec(const ClusterSpec& spec, const FieldLocator& where);

// Maps a kind name used in files ("gpu", "nvswitch", "nic", "pcie-switch", "leaf", "spine").
bool node_kind_from_string(const std::string& s, NodeKind& out);
bool link_class_from_string(const std::string& s, LinkClass& out);

}  // namespace zerosim
