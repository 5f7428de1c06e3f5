// Cluster builders: DGX-class servers (GPUs on one NVSwitch vertex, GPUs to NICs over PCIe) joined
// by a rail-optimized or a two-level fat-tree InfiniBand fabric. Every ClusterSpec field is
// validated.
//
// Rail-optimized: NIC r of every server attaches to a rail-r leaf; a leaf takes kLeafDownPorts (32)
// servers, so rail r has ceil(nodes / 32) leaves. Fat-tree: all NICs of a server attach to the same
// leaf; a leaf takes floor(32 / nics_per_node) servers. In both, when there is more than one leaf,
// every leaf has one uplink to each of min(32, leaves) spines; a leaf's uplinks together carry its
// used downlink bandwidth divided by the oversubscription. Traffic between rails (or leaves) goes
// up to a spine. The router picks the spine by destination, as InfiniBand's fat-tree routing does
// (switches forward by destination LID; D-mod-k, see topology_graph.hpp): NICs are numbered leaf by
// leaf in the order their links are added here (rail: NIC r of node n is number r x nodes + n;
// fat-tree: n x nics + r), and every flow to NIC number q goes up to spine q mod (spines), whatever
// its source leaf. On rail clusters whose spine count divides the node count (8 rails and a
// multiple of 32 nodes: 8, 16, 24 or 32 spines) that is spine (n mod spines) on every rail.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/topology/cluster_shape.hpp"
#include "sim/topology/node_types.hpp"
#include "sim/topology/topology_graph.hpp"

namespace zerosim {

namespace {

[[noreturn]] void fail(const FieldLocator& where, const std::string& field,
                       const std::string& rule) {
  auto [file, path] = where(field);
  throw InputError(file, path, rule);
}

// A vertex name, a + i + b (+ j when j >= 0), e.g. "n3.gpu7": by appends to a buffer, for
// fmt::format was a sixth of building a cluster. i, j >= 0.
std::string vertex_name(std::string_view a, int i, std::string_view b = {}, int j = -1) {
  char buf[64];
  char* p = std::copy(a.begin(), a.end(), buf);
  p = std::to_chars(p, buf + 32, i).ptr;  // a and b are short literals
  p = std::copy(b.begin(), b.end(), p);
  if (j >= 0) p = std::to_chars(p, buf + sizeof buf, j).ptr;
  return std::string(buf, p);
}

std::string known_node_types() {
  std::string s;
  for (const auto& t : kNodeTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

// A ClusterSpec with its defaults filled in (NIC count and line rate from the node type), every
// field checked.
struct ResolvedSpec {
  const NodeTypeSpec* nt;
  int nics;
  double gbps;
  NicPath nic_path;
  bool pxn;
};

ResolvedSpec resolve_spec(const ClusterSpec& spec, const FieldLocator& where) {
  const NodeTypeSpec* nt = find_node_type(spec.node_type);
  if (!nt)
    fail(where, "node_type",
         fmt::format("unknown node type '{}' (known: {})", spec.node_type, known_node_types()));
  if (spec.nodes < 1 || spec.nodes > kMaxNodes)
    fail(where, "nodes", fmt::format("must be between 1 and {} (got {})", kMaxNodes, spec.nodes));
  if (std::int64_t{spec.nodes} * nt->gpus > kMaxBuilderGpus)
    fail(where, "nodes",
         fmt::format("{} nodes x {} GPUs = {} GPUs, more than a cluster's limit of {}", spec.nodes,
                     nt->gpus, std::int64_t{spec.nodes} * nt->gpus, kMaxBuilderGpus));
  const int nics = spec.nics_per_node == -1 ? nt->max_nics : spec.nics_per_node;
  if (nics < 1 || nics > nt->max_nics)
    fail(where, "nics_per_node",
         fmt::format("must be between 1 and {} for {} (got {})", nt->max_nics, nt->name,
                     spec.nics_per_node));
  const double gbps = spec.nic_gbps == -1 ? nt->default_nic_gbps : spec.nic_gbps;
  if (!(std::isfinite(gbps) && gbps > 0))
    fail(where, "nic_gbps",
         fmt::format("must be a positive line rate in Gbit/s (got {})", spec.nic_gbps));
  if (spec.fabric != "rail" && spec.fabric != "fat-tree")
    fail(where, "fabric", fmt::format("unknown fabric '{}' (known: rail, fat-tree)", spec.fabric));
  if (!(std::isfinite(spec.oversubscription) && spec.oversubscription >= 1))
    fail(where, "oversubscription",
         fmt::format("must be at least 1 (got {})", spec.oversubscription));
  NicPath path = nt->nic_path;
  if (!spec.nic_path.empty() && !parse_nic_path(spec.nic_path, path))
    fail(where, "nic_path",
         fmt::format("must be PIX, PXB, PHB or SYS (NCCL's path type from a GPU to its NIC; PXN "
                     "is set by \"pxn\"), got '{}'",
                     spec.nic_path));
  if (spec.pxn != -1 && spec.pxn != 0 && spec.pxn != 1)
    fail(where, "pxn", fmt::format("must be true or false (got {})", spec.pxn));
  const bool pxn = spec.pxn == -1 ? nt->pxn : spec.pxn == 1;
  return {nt, nics, gbps, path, pxn};
}

// Servers: GPUs, then the NVSwitch, then the NICs, server after server. Returns each NIC's vertex,
// server by server.
std::vector<int> add_servers(TopologyBuilder& b, const NodeTypeSpec& nt, int N, int nics) {
  const int G = nt.gpus;
  std::vector<int> nic_vertex(static_cast<std::size_t>(N) * nics);
  for (int n = 0; n < N; ++n) {
    int first_gpu = -1;
    for (int i = 0; i < G; ++i) {
      int v = b.add_vertex(NodeKind::Gpu, vertex_name("n", n, ".gpu", i), n, i);
      if (i == 0) first_gpu = v;
    }
    int sw = b.add_vertex(NodeKind::NvSwitch, vertex_name("n", n, ".nvswitch"), n, -1);
    for (int k = 0; k < nics; ++k)
      nic_vertex[static_cast<std::size_t>(n) * nics + k] =
          b.add_vertex(NodeKind::Nic, vertex_name("n", n, ".nic", k), n, k);
    for (int i = 0; i < G; ++i) {
      b.add_link(first_gpu + i, sw, GBps_to_Bps(nt.nvlink_GBps), kNvLinkLatencyS, LinkClass::NvLink,
                 true);
      // GPU i shares NIC floor(i*K/G) with its PCIe-switch neighbours (2 GPUs per NIC on DGX-2 with
      // 8).
      int k = i * nics / G;
      b.add_link(first_gpu + i, nic_vertex[static_cast<std::size_t>(n) * nics + k],
                 GBps_to_Bps(nt.pcie_GBps), kPcieLatencyS, LinkClass::Pcie, true);
    }
  }
  return nic_vertex;
}

// The leaf switches and how many downlinks of each are used.
struct Leaves {
  std::vector<int> vertex;
  std::vector<int> down;
};

// Leaves and the NICs they take: rail r's leaves in turn, or one leaf for a run of servers.
Leaves add_leaves(TopologyBuilder& b, const std::vector<int>& nic_vertex, int N, int nics,
                  bool rail, double nic_Bps) {
  Leaves l;
  std::vector<int>& leaves = l.vertex;
  std::vector<int>& leaf_down = l.down;
  if (rail) {
    const int per_rail = (N + kLeafDownPorts - 1) / kLeafDownPorts;
    leaves.reserve(static_cast<std::size_t>(nics) * per_rail);
    leaf_down.reserve(leaves.capacity());
    for (int r = 0; r < nics; ++r)
      for (int j = 0; j < per_rail; ++j) {
        leaves.push_back(
            b.add_vertex(NodeKind::LeafSwitch, vertex_name("rail", r, ".leaf", j), -1, -1));
        leaf_down.push_back(0);
      }
    for (int n = 0; n < N; ++n)
      for (int r = 0; r < nics; ++r) {
        int li = r * per_rail + n / kLeafDownPorts;
        b.add_link(nic_vertex[static_cast<std::size_t>(n) * nics + r], leaves[li], nic_Bps,
                   kNetworkLatencyS, LinkClass::Network, true);
        ++leaf_down[li];
      }
  } else {
    const int nodes_per_leaf = std::max(1, kLeafDownPorts / nics);
    const int count = (N + nodes_per_leaf - 1) / nodes_per_leaf;
    leaves.reserve(static_cast<std::size_t>(count));
    leaf_down.reserve(leaves.capacity());
    for (int j = 0; j < count; ++j) {
      leaves.push_back(b.add_vertex(NodeKind::LeafSwitch, vertex_name("leaf", j), -1, -1));
      leaf_down.push_back(0);
    }
    for (int n = 0; n < N; ++n)
      for (int r = 0; r < nics; ++r) {
        int li = n / nodes_per_leaf;
        b.add_link(nic_vertex[static_cast<std::size_t>(n) * nics + r], leaves[li], nic_Bps,
                   kNetworkLatencyS, LinkClass::Network, true);
        ++leaf_down[li];
      }
  }
  return l;
}

// Spines, only when there is more than one leaf: every leaf has one uplink to each, together
// carrying its used downlink bandwidth divided by the oversubscription.
std::vector<int> add_spines(TopologyBuilder& b, const Leaves& leaves, double nic_Bps,
                            double oversubscription) {
  const int L = static_cast<int>(leaves.vertex.size());
  std::vector<int> spines;
  if (L > 1) {
    const int S = std::min(kMaxSpines, L);
    spines.reserve(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s)
      spines.push_back(b.add_vertex(NodeKind::SpineSwitch, vertex_name("spine", s), -1, -1));
    for (int li = 0; li < L; ++li) {
      const double up_Bps = leaves.down[li] * nic_Bps / oversubscription / S;
      for (int s = 0; s < S; ++s)
        b.add_link(leaves.vertex[li], spines[s], up_Bps, kNetworkLatencyS, LinkClass::Network,
                   true);
    }
  }
  return spines;
}

// Block rotation candidate: the servers under one leaf (per rail) and that leaf move one block
// on; with every leaf full, add_block_rotation confirms it (the spine choice, every link). Without
// it (a partial last leaf), the leaves alone still move one block on, modulo the leaves per rail:
// add_fabric_rotation checks that this rotates the fabric with its link costs, for the router.
void add_rotation_candidate(Topology& t, const std::vector<int>& leaves, std::size_t spines, int N,
                            int G, int nics, bool rail) {
  const int L = static_cast<int>(leaves.size());
  const int per_leaf = rail ? kLeafDownPorts : std::max(1, kLeafDownPorts / nics);
  const int per_rail = rail ? (N + kLeafDownPorts - 1) / kLeafDownPorts : L;
  if (spines == 0) return;
  RotationLayout lay;
  lay.block_gpus = per_leaf * G;
  lay.spines = static_cast<std::uint32_t>(spines);
  lay.block_of.assign(static_cast<std::size_t>(t.vertex_count()), -1);
  lay.rep_of.resize(static_cast<std::size_t>(t.vertex_count()));
  const bool whole = N % per_leaf == 0 && N / per_leaf >= 2;
  const int per_node = G + 1 + nics;  // vertices per server, added server by server above
  for (int v = 0; v < t.vertex_count(); ++v) {
    lay.rep_of[v] = v;
    const int node = t.vertex(v).node;
    if (node < 0 || !whole) continue;
    lay.block_of[v] = node / per_leaf;
    lay.rep_of[v] = v - lay.block_of[v] * per_leaf * per_node;
  }
  for (int li = 0; li < L; ++li) {
    lay.block_of[leaves[li]] = li % per_rail;
    lay.rep_of[leaves[li]] = leaves[li - li % per_rail];
  }
  if (whole) add_block_rotation(t, lay);
  add_fabric_rotation(t, lay, per_rail);
}

}  // namespace

Topology build_cluster_located(const ClusterSpec& spec, const FieldLocator& where) {
  const auto [nt, nics, gbps, nic_path, pxn] = resolve_spec(spec, where);
  const int N = spec.nodes, G = nt->gpus;
  const double nic_Bps = gbps_to_Bps(gbps);
  const bool rail = spec.fabric == "rail";
  TopologyBuilder b(spec.name.empty() ? nt->name : spec.name, nt->name, nt->gpu_model, G);
  b.set_nics(nics, nic_Bps);
  b.set_fabric(spec.fabric, spec.oversubscription);
  {
    const std::size_t per_node = static_cast<std::size_t>(G) + 1 + nics,
                      leaves = static_cast<std::size_t>(nics) * N;
    b.reserve(N * per_node + leaves + kMaxSpines,
              2 * (static_cast<std::size_t>(N) * (2 * G + nics) + leaves * kMaxSpines));
  }
  const std::vector<int> nic_vertex = add_servers(b, *nt, N, nics);
  const Leaves leaves = add_leaves(b, nic_vertex, N, nics, rail, nic_Bps);
  const std::vector<int> spines = add_spines(b, leaves, nic_Bps, spec.oversubscription);
  Topology t = b.finish();
  add_rotation_candidate(t, leaves.vertex, spines.size(), N, G, nics, rail);
  // Everything the graph depends on (the name is not part of it). Doubles in their shortest
  // round-trip form, so distinct values give distinct keys.
  // The NIC path is not part of the graph but of what NCCL runs on it: caches of NCCL's choices
  // per fabric tell the paths apart by it.
  TopologyBuilder::set_builder_key(
      t, fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", nt->name, N, nics, gbps, spec.fabric,
                     spec.oversubscription, nic_path_key(nic_path), pxn));
  TopologyBuilder::set_fabric(t, spec.fabric, spec.oversubscription);
  TopologyBuilder::set_nic_path(t, nic_path, pxn);
  return t;
}

int leaf_block_nodes(const std::string& fabric, int nics_per_node) {
  return fabric == "rail" ? kLeafDownPorts : std::max(1, kLeafDownPorts / nics_per_node);
}

std::string missing_rotation(const Topology& t) {
  if (t.rotation_blocks() > 1 || t.node_count() < 2) return "";
  if (t.builder_key().empty()) return "an explicit graph carries no block rotation";
  const int per_leaf = leaf_block_nodes(t.fabric(), t.nics_per_node());
  if (t.node_count() <= per_leaf) return "";  // one block: nothing to fold
  if (t.node_count() % per_leaf != 0)
    return fmt::format("{} nodes are not a whole number of {}-node leaf blocks", t.node_count(),
                       per_leaf);
  return fmt::format("the rotation by {} nodes does not preserve this {} fabric's routes and links",
                     per_leaf, t.fabric());
}

const NodeTypeSpec& check_cluster_spec(const ClusterSpec& spec, const FieldLocator& where) {
  return *resolve_spec(spec, where).nt;
}

Topology build_cluster(const ClusterSpec& spec, const std::string& source_file) {
  return build_cluster_located(spec, [&](const std::string& field) {
    return std::pair{source_file, field};
  });
}

}  // namespace zerosim
