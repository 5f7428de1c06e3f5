// Topology basics: names of kinds, assembling the Boost graph from flat arrays, DOT and summary.
#include "sim/topology/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/graphviz.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "sim/topology/topology_graph.hpp"

namespace zerosim {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Gpu:
      return "gpu";
    case NodeKind::NvSwitch:
      return "nvswitch";
    case NodeKind::Nic:
      return "nic";
    case NodeKind::PcieSwitch:
      return "pcie-switch";
    case NodeKind::LeafSwitch:
      return "leaf";
    case NodeKind::SpineSwitch:
      return "spine";
  }
  return "?";
}

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::NvLink:
      return "nvlink";
    case LinkClass::Pcie:
      return "pcie";
    case LinkClass::Network:
      return "network";
  }
  return "?";
}

bool node_kind_from_string(const std::string& s, NodeKind& out) {
  for (auto k : {NodeKind::Gpu, NodeKind::NvSwitch, NodeKind::Nic, NodeKind::PcieSwitch,
                 NodeKind::LeafSwitch, NodeKind::SpineSwitch}) {
    if (s == to_string(k)) {
      out = k;
      return true;
    }
  }
  return false;
}

bool link_class_from_string(const std::string& s, LinkClass& out) {
  for (auto c : {LinkClass::NvLink, LinkClass::Pcie, LinkClass::Network}) {
    if (s == to_string(c)) {
      out = c;
      return true;
    }
  }
  return false;
}

std::int64_t link_cost(double latency_s) {
  return kHopCost + static_cast<std::int64_t>(std::llround(latency_s * 1e12));
}

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

TopologyBuilder::TopologyBuilder(std::string name, std::string node_type, std::string gpu_model,
                                 int gpus_per_node) {
  t_.name_ = std::move(name);
  t_.node_type_ = std::move(node_type);
  t_.gpu_model_ = std::move(gpu_model);
  t_.gpus_per_node_ = gpus_per_node;
}

void TopologyBuilder::reserve(std::size_t vertices, std::size_t directed_links) {
  t_.vertices_.reserve(vertices);
  t_.links_.reserve(directed_links);
}

int TopologyBuilder::add_vertex(NodeKind kind, std::string name, int node, int local) {
  t_.vertices_.push_back(VertexInfo{kind, std::move(name), node, local});
  return static_cast<int>(t_.vertices_.size()) - 1;
}

void TopologyBuilder::add_link(int from, int to, double bandwidth_Bps, double latency_s,
                               LinkClass cls, bool duplex) {
  t_.links_.push_back(LinkInfo{from, to, bandwidth_Bps, latency_s, cls});
  if (duplex) t_.links_.push_back(LinkInfo{to, from, bandwidth_Bps, latency_s, cls});
}

void TopologyBuilder::set_nics(int per_node, double nic_Bps) {
  t_.nics_per_node_ = per_node;
  t_.nic_Bps_ = nic_Bps;
}

void TopologyBuilder::set_fabric(std::string fabric, double oversubscription) {
  fabric_ = std::move(fabric);
  oversubscription_ = oversubscription;
}

RouteCache& TopologyBuilder::cache(const Topology& t) {
  if (!t.cache_) {
    t.cache_ = std::make_unique<RouteCache>();
    t.cache_->suffixes.configure(static_cast<int>(t.graph_->fabric_vertex.size()), t.gpu_count());
  }
  return *t.cache_;
}

namespace {

// link_cost of the latest two latencies seen: the builders' links share a few latencies, and
// llround was a twentieth of building a cluster.
class LinkCosts {
 public:
  std::int64_t operator()(double latency_s) {
    if (latency_s == seen_[0].latency_s) return seen_[0].cost;
    if (latency_s == seen_[1].latency_s) return seen_[1].cost;
    seen_[1] = seen_[0];
    seen_[0] = {latency_s, link_cost(latency_s)};
    return seen_[0].cost;
  }

 private:
  struct Seen {
    double latency_s;
    std::int64_t cost;
  };
  Seen seen_[2] = {{0, link_cost(0)}, {0, link_cost(0)}};
};

// The router's decomposition holds when (a) no link joins two different servers directly and (b)
// each "border" vertex (in-server, with a fabric neighbor) is not a GPU, has exactly one fabric
// neighbor and only GPUs as in-server neighbors. Then server interiors are never transit for other
// traffic.
void precompute_decomposition(const Topology& t, TopologyGraph& tg, LinkCosts& link_costs) {
  const int n = t.vertex_count();
  tg.attach.assign(n, -1);
  tg.up_cost.assign(n, kInfCost);
  tg.down_cost.assign(n, kInfCost);
  tg.decomposable = true;
  auto is_fabric = [&](int v) { return t.vertex(v).node < 0; };
  std::vector<char> inner_non_gpu(n, 0);  // in-server vertex with a non-GPU in-server neighbor
  for (const auto& l : t.links()) {
    bool ff = is_fabric(l.from), tf = is_fabric(l.to);
    if (!ff && !tf && t.vertex(l.from).node != t.vertex(l.to).node) tg.decomposable = false;
    if (!ff && !tf) {
      if (t.vertex(l.to).kind != NodeKind::Gpu) inner_non_gpu[l.from] = 1;
      if (t.vertex(l.from).kind != NodeKind::Gpu) inner_non_gpu[l.to] = 1;
    }
    if (ff != tf) {
      int b = ff ? l.to : l.from, f = ff ? l.from : l.to;
      if (tg.attach[b] >= 0 && tg.attach[b] != f) tg.decomposable = false;
      tg.attach[b] = f;
      std::int64_t c = link_costs(l.latency_s);
      auto& slot = ff ? tg.down_cost[b] : tg.up_cost[b];
      slot = std::min(slot, c);
    }
  }
  for (int v = 0; v < n; ++v) {
    if (tg.attach[v] < 0) continue;
    if (t.vertex(v).kind == NodeKind::Gpu || inner_non_gpu[v]) tg.decomposable = false;
  }
  // Per-server vertex lists (slots) for the interior fields.
  int nodes = 0;
  for (int v = 0; v < n; ++v) nodes = std::max(nodes, t.vertex(v).node + 1);
  tg.node_begin.assign(nodes + 1, 0);
  tg.slot.assign(n, -1);
  for (int v = 0; v < n; ++v)
    if (!is_fabric(v)) ++tg.node_begin[t.vertex(v).node + 1];
  for (int i = 0; i < nodes; ++i) tg.node_begin[i + 1] += tg.node_begin[i];
  tg.node_vertices.assign(tg.node_begin[nodes], -1);
  std::vector<int> fill(tg.node_begin.begin(), tg.node_begin.end() - 1);
  for (int v = 0; v < n; ++v) {
    if (is_fabric(v)) continue;
    int node = t.vertex(v).node;
    tg.slot[v] = fill[node] - tg.node_begin[node];
    tg.node_vertices[fill[node]++] = v;
  }
}

// D-mod-k keys (route_dest_key, topology_graph.hpp): per GPU, the number of the fabric port that
// delivers its traffic. A vertex's "switch" is its first fabric in-neighbour (in-edge order); a
// GPU's delivering vertex is itself if it has a switch, else its first non-GPU in-neighbour that
// has one. Ports are numbered like LIDs: switch by switch in vertex order, each switch's delivered
// in-server out-neighbours in out-edge order. Linear in the links.
void precompute_dest_keys(const Topology& t, TopologyGraph& tg) {
  const Graph& g = tg.g;
  const int n = t.vertex_count();
  auto is_fabric = [&](int v) { return g[v].node < 0; };
  std::vector<int> sw(n, -1);
  for (int v = 0; v < n; ++v) {
    if (is_fabric(v)) continue;
    for (auto [it, end] = boost::in_edges(v, g); it != end && sw[v] < 0; ++it) {
      const int u = static_cast<int>(boost::source(*it, g));
      if (is_fabric(u)) sw[v] = u;
    }
  }
  std::vector<std::int64_t> port(n, -1);
  std::int64_t next = 0;
  for (int a = 0; a < n; ++a) {
    if (!is_fabric(a)) continue;
    for (auto [it, end] = boost::out_edges(a, g); it != end; ++it) {
      const int w = static_cast<int>(boost::target(*it, g));
      if (is_fabric(w) || sw[w] != a || port[w] >= 0) continue;
      port[w] = next++;
    }
  }
  tg.dest_key.assign(static_cast<std::size_t>(t.gpu_count()), 0);
  for (int i = 0; i < t.gpu_count(); ++i) {
    const int d = t.gpu_vertex(i);
    int via = sw[d] >= 0 ? d : -1;
    for (auto [it, end] = boost::in_edges(d, g); it != end && via < 0; ++it) {
      const int u = static_cast<int>(boost::source(*it, g));
      if (!is_fabric(u) && !tg.is_gpu[u] && sw[u] >= 0) via = u;
    }
    tg.dest_key[i] = static_cast<std::uint32_t>(via >= 0 ? port[via] : i);
  }
}

// Reserves each vertex's out- and in-edge storage and the edge list for the edges about to be
// added, so that add_edge does not grow them one edge at a time (their reallocations were most of
// building a graph). deg[2v] and deg[2v + 1]: v's out- and in-degree.
void reserve_edges(Graph& g, const std::vector<int>& deg, std::size_t edges) {
  g.m_edges.reserve(edges);
  for (std::size_t v = 0; v < g.m_vertices.size(); ++v) {
    auto& sv = g.m_vertices[v];
    if (deg[2 * v] > 0) sv.m_out_edges.reserve(static_cast<std::size_t>(deg[2 * v]));
    if (deg[2 * v + 1] > 0) sv.m_in_edges.reserve(static_cast<std::size_t>(deg[2 * v + 1]));
  }
}

}  // namespace

TopologyGraph::TopologyGraph(std::size_t vertices, std::size_t fabric_vertices)
    : g(vertices), fabric(fabric_vertices) {}

Topology TopologyBuilder::finish() {
  Topology& t = t_;
  const int n = static_cast<int>(t.vertices_.size());
  int nodes = 0, gpus = 0, fabric_vertices = 0;
  for (int v = 0; v < n; ++v) {
    const VertexInfo& vi = t.vertices_[v];
    gpus += vi.kind == NodeKind::Gpu;
    fabric_vertices += vi.node < 0;
    nodes = std::max(nodes, vi.node + 1);
  }
  t.gpu_vertex_.clear();
  t.gpu_vertex_.reserve(static_cast<std::size_t>(gpus));
  for (int v = 0; v < n; ++v)
    if (t.vertices_[v].kind == NodeKind::Gpu) t.gpu_vertex_.push_back(v);
  const auto by_node_local = [&](int a, int b) {
    const auto &x = t.vertices_[a], &y = t.vertices_[b];
    return x.node != y.node ? x.node < y.node : x.local < y.local;
  };
  // The builders add GPUs in (node, local) order already.
  if (!std::is_sorted(t.gpu_vertex_.begin(), t.gpu_vertex_.end(), by_node_local))
    std::stable_sort(t.gpu_vertex_.begin(), t.gpu_vertex_.end(), by_node_local);
  t.nodes_ = nodes;

  // Both graphs are constructed at their size: adjacency_list has no move assignment.
  auto tg = std::make_unique<TopologyGraph>(static_cast<std::size_t>(n),
                                            static_cast<std::size_t>(fabric_vertices));
  tg->fabric_name = fabric_;
  tg->oversubscription = oversubscription_;
  tg->fabric_index.assign(n, -1);
  tg->fabric_vertex.reserve(static_cast<std::size_t>(fabric_vertices));
  tg->is_gpu.assign(n, 0);
  for (int v = 0; v < n; ++v) {
    tg->g[v] = VertexProps{t.vertices_[v].kind, t.vertices_[v].node};
    tg->is_gpu[v] = t.vertices_[v].kind == NodeKind::Gpu;
    if (t.vertices_[v].node < 0) {
      tg->fabric_index[v] = static_cast<int>(tg->fabric_vertex.size());
      tg->fabric_vertex.push_back(v);
    }
  }
  for (std::size_t i = 0; i < tg->fabric_vertex.size(); ++i)
    tg->fabric[i] = tg->g[tg->fabric_vertex[i]];
  {
    std::vector<int> deg(2 * static_cast<std::size_t>(n), 0),
        fabric_deg(2 * static_cast<std::size_t>(fabric_vertices), 0);
    std::size_t fabric_edges = 0;
    for (const auto& l : t.links_) {
      ++deg[2 * static_cast<std::size_t>(l.from)];
      ++deg[2 * static_cast<std::size_t>(l.to) + 1];
      const int a = tg->fabric_index[l.from], b = tg->fabric_index[l.to];
      if (a < 0 || b < 0) continue;
      ++fabric_deg[2 * static_cast<std::size_t>(a)];
      ++fabric_deg[2 * static_cast<std::size_t>(b) + 1];
      ++fabric_edges;
    }
    reserve_edges(tg->g, deg, t.links_.size());
    reserve_edges(tg->fabric, fabric_deg, fabric_edges);
  }
  LinkCosts link_costs;
  for (LinkId id = 0; id < static_cast<LinkId>(t.links_.size()); ++id) {
    const auto& l = t.links_[id];
    EdgeProps ep{id, link_costs(l.latency_s)};
    boost::add_edge(l.from, l.to, ep, tg->g);
    int a = tg->fabric_index[l.from], b = tg->fabric_index[l.to];
    if (a >= 0 && b >= 0) boost::add_edge(a, b, ep, tg->fabric);
  }
  precompute_decomposition(t, *tg, link_costs);
  precompute_dest_keys(t, *tg);
  t.graph_ = std::move(tg);
  t.cache_.reset();
  return std::move(t_);
}

std::string Topology::to_dot() const {
  std::ostringstream os;
  const auto& g = graph_->g;
  auto vertex_writer = [this](std::ostream& out, std::size_t v) {
    const auto& vi = vertices_[v];
    const char* shape = vi.kind == NodeKind::Gpu   ? "box"
                        : vi.kind == NodeKind::Nic ? "ellipse"
                                                   : "diamond";
    out << fmt::format("[label=\"{}\",shape={}]", vi.name, shape);
  };
  auto edge_writer = [this, &g](std::ostream& out, const Graph::edge_descriptor& e) {
    const auto& l = links_[g[e].id];
    out << fmt::format("[label=\"{:g} GB/s\",class=\"{}\"]", l.bandwidth_Bps / 1e9,
                       to_string(l.cls));
  };
  boost::write_graphviz(os, g, vertex_writer, edge_writer);
  return os.str();
}

std::string Topology::summary() const {
  std::map<NodeKind, int> kinds;
  for (const auto& v : vertices_) ++kinds[v.kind];
  // (class, GB/s) -> directed link count, ordered for deterministic output.
  std::map<std::pair<LinkClass, double>, int> classes;
  for (const auto& l : links_) ++classes[{l.cls, l.bandwidth_Bps / 1e9}];
  std::string s = fmt::format("{} ({}): {} node(s) x {} {} = {} GPUs", name_, node_type_, nodes_,
                              gpus_per_node_, gpu_model_, gpu_count());
  if (nics_per_node_ > 0)
    s += fmt::format("; {} NIC(s)/node x {:g} Gbps", nics_per_node_, nic_Bps_ * 8 / 1e9);
  s += fmt::format("; fabric {}", graph_->fabric_name);
  if (graph_->fabric_name != "explicit")
    s += fmt::format(", oversubscription {:g}", graph_->oversubscription);
  s += fmt::format("\nvertices: {}", vertex_count());
  for (const auto& [k, c] : kinds) s += fmt::format(", {} {}", c, to_string(k));
  s += fmt::format("\ndirected links: {}", link_count());
  for (const auto& [key, c] : classes)
    s += fmt::format(", {} {} @ {:g} GB/s", c, to_string(key.first), key.second);
  s += "\n";
  return s;
}

}  // namespace zerosim
