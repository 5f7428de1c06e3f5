// Topology files and presets: {"builder": {...ClusterSpec...}} or an explicit graph, read strictly
// (unknown keys, unknown link ends, duplicate names, non-positive bandwidth, disconnected GPUs are
// InputErrors naming the file, the JSON path and the rule).
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/units.hpp"
#include "sim/topology/cluster_shape.hpp"
#include "sim/topology/node_types.hpp"
#include "sim/topology/topology_graph.hpp"

namespace zerosim {

namespace {

// Link rates the models can price, in Gbit/s: 1 Mbit/s to 1 Pbit/s. Beyond them step times
// overflow or underflow (1e308 Gbps printed "inf Gbps" and wrote null into the result; 5e-324
// gave a null step time). `bits_per_unit`: 1 for gbps, 8 for GBps.
constexpr double kMinLinkGbps = 1e-3, kMaxLinkGbps = 1e6;

double get_rate(const JsonReader& r, double bits_per_unit) {
  const double v = r.get_positive();
  const double lo = kMinLinkGbps / bits_per_unit, hi = kMaxLinkGbps / bits_per_unit;
  if (v < lo || v > hi)
    r.fail(
        fmt::format("must be between {:g} and {:g} (1 Mbit/s to 1 Pbit/s; got {:g})", lo, hi, v));
  return v;
}

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// Reads the "builder" object into a spec. Absent keys take documented defaults: nodes 1, the node
// type's NIC count, line rate, NIC path and PXN, fabric "rail", oversubscription 1.
ClusterSpec read_builder(const JsonReader& b) {
  b.require_object({"node_type", "nodes", "nics_per_node", "nic_gbps", "fabric", "oversubscription",
                    "nic_path", "pxn"});
  ClusterSpec s;
  s.node_type = b.at("node_type").get_string();
  if (b.has("nodes")) {
    auto r = b.at("nodes");
    auto v = r.get_int();
    if (v < 1 || v > kMaxNodes)
      r.fail(fmt::format("must be between 1 and {} (got {})", kMaxNodes, v));
    s.nodes = static_cast<int>(v);
  }
  if (b.has("nics_per_node")) {
    auto r = b.at("nics_per_node");
    auto v = r.get_int();
    if (v < 1 || v > 64)
      r.fail(fmt::format("must be between 1 and the node type's maximum (got {})", v));
    s.nics_per_node = static_cast<int>(v);
  }
  if (b.has("nic_gbps")) s.nic_gbps = get_rate(b.at("nic_gbps"), 1);
  s.fabric = b.string_or("fabric", "rail");
  s.oversubscription = b.number_or("oversubscription", 1.0);
  if (b.has("nic_path")) s.nic_path = b.at("nic_path").get_string();
  if (b.has("pxn")) s.pxn = b.at("pxn").get_bool() ? 1 : 0;
  return s;
}

// An explicit graph's optional NIC path (PXB when absent) and PXN (false).
void read_explicit_nic_path(const JsonReader& root, Topology& t) {
  NicPath path = NicPath::Pxb;
  if (root.has("nic_path")) {
    const JsonReader r = root.at("nic_path");
    if (!parse_nic_path(r.get_string(), path))
      r.fail(
          fmt::format("must be PIX, PXB, PHB or SYS (NCCL's path type from a GPU to its NIC; "
                      "PXN is set by \"pxn\"), got '{}'",
                      r.get_string()));
  }
  const bool pxn = root.has("pxn") && root.at("pxn").get_bool();
  TopologyBuilder::set_nic_path(t, path, pxn);
}

LinkClass infer_class(NodeKind a, NodeKind b) {
  auto fabric = [](NodeKind k) { return k == NodeKind::LeafSwitch || k == NodeKind::SpineSwitch; };
  auto pcie = [](NodeKind k) { return k == NodeKind::Nic || k == NodeKind::PcieSwitch; };
  if (fabric(a) || fabric(b)) return LinkClass::Network;
  if (pcie(a) || pcie(b)) return LinkClass::Pcie;
  return LinkClass::NvLink;
}

// The vertices of an explicit graph read so far: their indices by name and their kinds, each GPU's
// (server, local) -> JSON index (to reject duplicates and count per server), NICs per server and
// the number of servers.
struct ExplicitVertices {
  std::map<std::string, int> index;
  std::vector<NodeKind> kinds;
  std::map<std::pair<int, int>, std::size_t> gpu_at;
  std::map<int, int> nics_at;
  int servers = 0;
};

NodeKind read_vertex_kind(const JsonReader& r) {
  auto kind_r = r.at("kind");
  NodeKind kind;
  if (!node_kind_from_string(kind_r.get_string(), kind))
    kind_r.fail(
        fmt::format("unknown kind '{}' (known: gpu, nvswitch, nic, pcie-switch, leaf, spine)",
                    kind_r.get_string()));
  return kind;
}

// The vertex's server: an index for a vertex inside one, -1 for a fabric switch.
int read_vertex_node(const JsonReader& r, NodeKind kind, ExplicitVertices& v) {
  const bool in_server = kind != NodeKind::LeafSwitch && kind != NodeKind::SpineSwitch;
  if (in_server) {
    auto node_r = r.at("node");
    auto n = node_r.get_int();
    if (n < 0 || n >= kMaxNodes)
      node_r.fail(fmt::format("must be a server index 0..{} (got {})", kMaxNodes - 1, n));
    v.servers = std::max(v.servers, static_cast<int>(n) + 1);
    return static_cast<int>(n);
  }
  if (r.has("node") && r.at("node").get_int() != -1)
    r.at("node").fail("fabric switches (leaf, spine) belong to no server: omit 'node' or use -1");
  return -1;
}

// The vertex's local index: a GPU's, unique in its server, or any other vertex's optional one.
int read_vertex_local(const JsonReader& r, NodeKind kind, int node, std::size_t i, std::int64_t gpn,
                      ExplicitVertices& v) {
  if (kind == NodeKind::Gpu) {
    auto local_r = r.at("local");
    auto l = local_r.get_int();
    if (l < 0 || l >= gpn)
      local_r.fail(
          fmt::format("must be a GPU index 0..{} (gpus_per_node - 1), got {}", gpn - 1, l));
    const int local = static_cast<int>(l);
    if (auto [it, fresh] = v.gpu_at.emplace(std::pair{node, local}, i); !fresh)
      local_r.fail(fmt::format("server {} already has a GPU with local index {} (at /nodes/{})",
                               node, local, it->second));
    return local;
  }
  if (r.has("local")) {
    auto l = r.at("local").get_int();
    if (l < -1 || l >= 65536) r.at("local").fail("must be -1 or a local index 0..65535");
    return static_cast<int>(l);
  }
  return -1;
}

// Vertex i of "nodes", checked and added to the graph.
void read_vertex(const JsonReader& r, std::size_t i, std::int64_t gpn, ExplicitVertices& v,
                 TopologyBuilder& b) {
  r.require_object({"name", "kind", "node", "local"});
  auto name_r = r.at("name");
  std::string vname = name_r.get_string();
  if (vname.empty()) name_r.fail("must not be empty");
  if (auto it = v.index.find(vname); it != v.index.end())
    name_r.fail(fmt::format("duplicate vertex name '{}' (first at /nodes/{})", vname, it->second));
  const NodeKind kind = read_vertex_kind(r);
  const int node = read_vertex_node(r, kind, v);
  const int local = read_vertex_local(r, kind, node, i, gpn, v);
  if (kind == NodeKind::Nic) ++v.nics_at[node];
  v.index.emplace(vname, static_cast<int>(i));
  v.kinds.push_back(kind);
  b.add_vertex(kind, vname, node, local);
}

// Every vertex of "nodes"; every server 0..servers-1 must have all gpus_per_node GPUs.
ExplicitVertices read_vertices(const JsonReader& nodes, std::int64_t gpn, TopologyBuilder& b) {
  const std::size_t nv = nodes.array_size();
  if (nv == 0) nodes.fail("must list at least one vertex");
  ExplicitVertices v;
  for (std::size_t i = 0; i < nv; ++i) read_vertex(nodes.at(i), i, gpn, v, b);
  for (int n = 0; n < v.servers; ++n)
    for (int l = 0; l < gpn; ++l)
      if (!v.gpu_at.count({n, l}))
        nodes.fail(
            fmt::format("server {} has no GPU with local index {}: every server 0..{} needs "
                        "gpus_per_node = {} GPUs",
                        n, l, v.servers - 1, gpn));
  if (v.gpu_at.size() < 2) nodes.fail("needs at least two GPUs");
  return v;
}

// Link r's two ends, as vertex indices: two different listed vertices.
std::array<int, 2> read_link_ends(const JsonReader& r, const ExplicitVertices& v) {
  std::array<int, 2> ends{};
  const char* keys[2] = {"from", "to"};
  for (int e = 0; e < 2; ++e) {
    auto er = r.at(keys[e]);
    auto it = v.index.find(er.get_string());
    if (it == v.index.end())
      er.fail(fmt::format("unknown node '{}' (not listed in /nodes)", er.get_string()));
    ends[e] = it->second;
  }
  if (ends[0] == ends[1]) r.at("to").fail("a link must join two different vertices");
  return ends;
}

// Every link of "links", checked and added to the graph. Returns the NIC line rate: the bandwidth
// of the first network link with a NIC end (0: none).
double read_links(const JsonReader& links, const ExplicitVertices& v, TopologyBuilder& b) {
  const std::size_t nl = links.array_size();
  double nic_Bps = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    auto r = links.at(i);
    r.require_object({"from", "to", "GBps", "gbps", "latency_us", "duplex", "class"});
    const std::array<int, 2> ends = read_link_ends(r, v);
    if (r.has("GBps") == r.has("gbps"))
      r.fail("give the bandwidth as exactly one of 'GBps' (bytes) or 'gbps' (bits)");
    const double bw = r.has("GBps") ? GBps_to_Bps(get_rate(r.at("GBps"), 8))
                                    : gbps_to_Bps(get_rate(r.at("gbps"), 1));
    auto lat_r = r.at("latency_us");
    const double lat_s = lat_r.get_nonnegative() * 1e-6;
    if (lat_s > kMaxLinkLatencyS)
      lat_r.fail(fmt::format("must be at most {} us", kMaxLinkLatencyS * 1e6));
    const NodeKind a = v.kinds[ends[0]], z = v.kinds[ends[1]];
    LinkClass cls = infer_class(a, z);  // default: from the end kinds
    if (r.has("class")) {
      auto cr = r.at("class");
      if (!link_class_from_string(cr.get_string(), cls))
        cr.fail(
            fmt::format("unknown link class '{}' (known: nvlink, pcie, network)", cr.get_string()));
    }
    const bool duplex = r.bool_or("duplex", true);  // default: full duplex, as every real link is
    if (nic_Bps == 0 && cls == LinkClass::Network && (a == NodeKind::Nic || z == NodeKind::Nic))
      nic_Bps = bw;
    b.add_link(ends[0], ends[1], bw, lat_s, cls, duplex);
  }
  return nic_Bps;
}

// Every GPU must reach every other GPU (GPUs are endpoints, not transit).
void check_gpus_connected(const Topology& t, const std::string& path) {
  const auto& tg = TopologyBuilder::graph(t);
  for (int dst = 0; dst < t.gpu_count(); ++dst) {
    auto field = distance_field_to(tg.g, t.gpu_vertex(dst));
    for (int src = 0; src < t.gpu_count(); ++src) {
      if (src == dst || field[t.gpu_vertex(src)] < kInfCost) continue;
      throw InputError(
          path, fmt::format("/nodes/{}", t.gpu_vertex(src)),
          fmt::format("disconnected GPU: no route from '{}' to '{}'",
                      t.vertex(t.gpu_vertex(src)).name, t.vertex(t.gpu_vertex(dst)).name));
    }
  }
}

Topology read_explicit(const JsonReader& root, const std::string& path) {
  root.require_object({"name", "description", "node_type", "gpu_model", "gpus_per_node", "nodes",
                       "links", "nic_path", "pxn"});
  if (root.has("description")) root.at("description").get_string();
  const std::string name = root.has("name") ? root.at("name").get_string() : stem_of(path);
  const std::string node_type =
      root.has("node_type") ? root.at("node_type").get_string() : "custom";
  const std::string gpu_model = root.at("gpu_model").get_string();
  auto gpn_r = root.at("gpus_per_node");
  const auto gpn = gpn_r.get_int_at_least(1);
  if (gpn > 1024) gpn_r.fail("must be at most 1024");
  TopologyBuilder b(name, node_type, gpu_model, static_cast<int>(gpn));
  const ExplicitVertices vertices = read_vertices(root.at("nodes"), gpn, b);
  const double nic_Bps = read_links(root.at("links"), vertices, b);
  int nics = 0;
  for (const auto& [n, c] : vertices.nics_at) nics = std::max(nics, c);
  b.set_nics(nics, nic_Bps);
  Topology t = b.finish();
  check_gpus_connected(t, path);
  read_explicit_nic_path(root, t);
  return t;
}

bool any_override(const ClusterOverrides& o, std::string& flag) {
  if (o.nodes > 0)
    flag = "--nodes";
  else if (o.nics_per_node > 0)
    flag = "--nics-per-node";
  else if (o.nic_gbps > 0)
    flag = "--nic-gbps";
  else if (!o.fabric.empty())
    flag = "--fabric";
  else if (o.oversubscription > 0)
    flag = "--oversubscription";
  else
    return false;
  return true;
}

}  // namespace

Topology load_topology_file(const std::string& path) { return load_cluster(path, {}); }

namespace {

// --cluster read, with the command line's overrides applied and checked: a builder preset's spec
// and where each of its fields came from, or an explicit graph's document.
struct ReadCluster {
  std::string path;
  std::shared_ptr<const json> doc;
  std::optional<ClusterSpec> spec;  // a builder preset's
  // Which fields the command line replaced, so that errors name the flag instead of the file.
  std::map<std::string, std::string> flag_of;

  FieldLocator locator() const {
    return [this](const std::string& field) {
      auto it = flag_of.find(field);
      if (it != flag_of.end())
        return std::pair<std::string, std::string>{"<command line>", it->second};
      return std::pair<std::string, std::string>{path, "/builder/" + field};
    };
  }
};

ReadCluster read_cluster(const std::string& name_or_file, const ClusterOverrides& o,
                         FileCache* files) {
  ReadCluster c;
  c.path = resolve_data_file("topologies", name_or_file, "--cluster", files);
  const std::string& path = c.path;
  // Sweeps build clusters from the same preset over and over: with a cache, each distinct file
  // content is parsed once (an unreadable file goes through load_json_file for its error).
  if (files)
    c.doc = files->parsed<json>(
        path, [&](const std::string& text) { return parse_json_text(text, path); });
  if (!c.doc) c.doc = std::make_shared<const json>(load_json_file(path));
  JsonReader root(*c.doc, path);
  if (!root.value().is_object())
    root.fail(fmt::format("must be an object, not {}", root.value().type_name()));
  if (!root.has("builder")) {
    std::string flag;
    if (any_override(o, flag))
      throw InputError(
          "<command line>", flag,
          fmt::format("overrides apply only to builder presets; '{}' is an explicit graph", path));
    return c;
  }
  root.require_object({"name", "description", "builder"});
  if (root.has("description")) root.at("description").get_string();
  ClusterSpec& s = c.spec.emplace(read_builder(root.at("builder")));
  s.name = root.has("name") ? root.at("name").get_string() : stem_of(path);
  std::map<std::string, std::string>& flag_of = c.flag_of;
  if (o.nodes > 0) s.nodes = o.nodes, flag_of["nodes"] = "--nodes";
  if (o.nics_per_node > 0)
    s.nics_per_node = o.nics_per_node, flag_of["nics_per_node"] = "--nics-per-node";
  if (o.nic_gbps > 0) s.nic_gbps = o.nic_gbps, flag_of["nic_gbps"] = "--nic-gbps";
  if (o.nic_gbps > 0 && (o.nic_gbps < kMinLinkGbps || o.nic_gbps > kMaxLinkGbps))  // sweep lists
    throw flag_error("--nic-gbps", fmt::format("must be between {:g} and {:g} (got {:g})",
                                               kMinLinkGbps, kMaxLinkGbps, o.nic_gbps));
  if (!o.fabric.empty()) s.fabric = o.fabric, flag_of["fabric"] = "--fabric";
  if (o.oversubscription > 0)
    s.oversubscription = o.oversubscription, flag_of["oversubscription"] = "--oversubscription";
  const NodeTypeSpec* type = find_node_type(s.node_type);
  if (type) {  // the GPU limits, from the shape alone (an unknown node type is refused below)
    const std::int64_t gpus = std::int64_t{s.nodes} * type->gpus;
    const auto refuse = [&](const std::string& rule) {
      throw InputError(
          o.nodes > 0 ? "<command line>" : path, o.nodes > 0 ? "--nodes" : "/builder/nodes",
          fmt::format("{} nodes x {} GPUs = {} GPUs{}", s.nodes, type->gpus, gpus, rule));
    };
    if (o.max_gpus > 0 && gpus > o.max_gpus)
      refuse(fmt::format(", more than {}'s limit of {}", o.max_gpus_of, o.max_gpus));
    // Above the unfolded limit the cluster must fold: whole leaf blocks (an invalid NIC count is
    // refused by the spec's own check).
    const int nics = s.nics_per_node == -1 ? type->max_nics : s.nics_per_node;
    const int block = nics >= 1 ? leaf_block_nodes(s.fabric, nics) : 1;
    if (o.max_unfolded_gpus > 0 && gpus > o.max_unfolded_gpus && s.nodes % block != 0)
      refuse(
          fmt::format(": above {} GPUs {} needs whole {}-node leaf blocks (it simulates one "
                      "block of nodes for all, on the cluster's block rotation); {} is not a "
                      "multiple of {}",
                      o.max_unfolded_gpus, o.max_gpus_of, block, s.nodes, block));
  }
  // A preset without "nodes" is a node type (one DGX H100, one DGX-2): how many nodes a job runs
  // on is the user's choice, so it is never defaulted (one node would leave ZeRO++'s cross-node
  // techniques nothing to do). Checked after the preset's own fields, which it does not excuse.
  if (o.nodes <= 0 && !root.at("builder").has("nodes")) {
    const NodeTypeSpec& nt = check_cluster_spec(s, c.locator());
    throw flag_error("--nodes",
                     fmt::format("required with --cluster {}: the preset is one {} node ({} GPUs), "
                                 "not a cluster; give the job's node count (e.g. --nodes 1 for one "
                                 "machine, --nodes 16 for {} GPUs)",
                                 name_or_file, s.node_type, nt.gpus, 16 * nt.gpus));
  }
  return c;
}

}  // namespace

Topology load_cluster(const std::string& name_or_file, const ClusterOverrides& o,
                      FileCache* files) {
  const ReadCluster c = read_cluster(name_or_file, o, files);
  if (c.spec) return build_cluster_located(*c.spec, c.locator());
  Topology t = read_explicit(JsonReader(*c.doc, c.path), c.path);
  // An explicit graph carries no block rotation: every node is simulated.
  const int limit = o.max_unfolded_gpus > 0 ? o.max_unfolded_gpus : o.max_gpus;
  if (limit > 0 && t.gpu_count() > limit)
    throw InputError(
        c.path, "/nodes",
        fmt::format("{} GPUs, more than {}'s limit of {}{}", t.gpu_count(), o.max_gpus_of, limit,
                    o.max_unfolded_gpus > 0
                        ? " for a graph it cannot fold (an explicit graph carries "
                          "no block rotation)"
                        : ""));
  return t;
}

ClusterShape shape_of(const Topology& t) {
  return ClusterShape{t.node_type(), t.gpu_model(), t.node_count(), t.gpus_per_node(),
                      t.gpu_count()};
}

std::optional<ClusterShape> builder_shape(const std::string& name_or_file,
                                          const ClusterOverrides& o, FileCache* files) {
  const ReadCluster c = read_cluster(name_or_file, o, files);
  if (!c.spec) return std::nullopt;
  const NodeTypeSpec& nt = check_cluster_spec(*c.spec, c.locator());
  return ClusterShape{nt.name, nt.gpu_model, c.spec->nodes, nt.gpus, c.spec->nodes * nt.gpus};
}

}  // namespace zerosim
