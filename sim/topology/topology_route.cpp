// Routing: shortest path by (hops, latency); among equal-cost next hops the choice depends on the
// destination only (D-mod-k, see route_dest_key in topology_graph.hpp), cached per pair. GPUs are
// endpoints, never transit (GPU-to-GPU forwarding would be software, not the fabric).
//
// Why destination-based: InfiniBand switches forward by destination LID only, and OpenSM's fat-tree
// routing (ftree, up-down) routes the destinations leaf by leaf, port by port, each over the next
// uplink in turn. So every flow to one NIC takes the same spine whatever its source, and the NICs
// below a leaf take different spines (NIC number q with k spines: spine q mod k). The routes are
// then as symmetric as the fabric: with full leaves and k dividing the 32 ports, permuting leaves
// and nodes within a leaf (with the spines) maps routes to routes, which the flow tier's symmetry
// reduction (sim/net/equitable.hpp) exploits. A hash of (src, dst), as before, picked a random
// spine per pair and left almost no symmetry.
//
// Both routers walk from src to dst choosing, at each vertex, among the out-links whose far end is
// exactly one link cost closer to dst (in edge-index order; with k > 1 candidates, index = key % k,
// then key /= k, starting from key = route_dest_key(dst)). They differ only in how they obtain
// dist(v) = cost of the cheapest path v -> dst:
// - route_reference: one reverse Dijkstra over the whole graph per query.
// - Topology::route, when the graph decomposes (see precompute_decomposition): a path leaving a
//   server goes GPU -> border (NIC) -> its fabric switch -> fabric -> border -> GPU, so dist(fabric
//   vertex) = min over dst's borders b of distF(v, attach(b)) + cost(attach(b) -> b) + cost(b ->
//   dst), with distF from a reverse Dijkstra over the fabric subgraph cached per fabric target (a
//   few thousand at most), and dist(in-server switch) from a Dijkstra over the destination server
//   only (one per destination slot for all servers with the same in-server subgraph). The values
//   are equal to the full Dijkstra's, so the walk (and the route) is identical; tests check it.
// - otherwise: full reverse Dijkstra cached per destination vertex.
#include <boost/container/small_vector.hpp>
#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <map>
#include <stdexcept>

#include "sim/topology/topology_graph.hpp"

namespace zerosim {

std::uint64_t route_dest_key(const Topology& t, int dst_gpu) {
  return TopologyBuilder::graph(t).dest_key.at(static_cast<std::size_t>(dst_gpu));
}

namespace {

using RevGraph = boost::reverse_graph<Graph, const Graph&>;
using RevEdge = boost::graph_traits<RevGraph>::edge_descriptor;

// Keeps reverse edges whose original target (the vertex being expanded) may forward traffic: any
// non-GPU vertex, or the destination itself.
struct TransitOnly {
  const Graph* g = nullptr;
  const RevGraph* rg = nullptr;
  std::size_t dst = 0;
  bool operator()(const RevEdge& e) const {
    auto x = boost::source(e, *rg);
    return x == dst || (*g)[x].kind != NodeKind::Gpu;
  }
};

}  // namespace

std::vector<std::int64_t> distance_field_to(const Graph& g, std::size_t target) {
  RevGraph rg(g);
  boost::filtered_graph<RevGraph, TransitOnly> fg(rg, TransitOnly{&g, &rg, target});
  std::vector<std::int64_t> dist(boost::num_vertices(g), kInfCost);
  auto weight = boost::make_function_property_map<RevEdge, std::int64_t>(
      [&g](const RevEdge& e) { return g[e.underlying_descx].cost; });
  boost::dijkstra_shortest_paths_no_color_map(
      fg, target,
      boost::weight_map(weight)
          .distance_map(
              boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
          .distance_inf(kInfCost)
          .distance_zero(std::int64_t{0}));
  return dist;
}

namespace {

// With `suffixes` (decomposable graphs), the walk reuses and records the part after each fabric
// vertex it reaches (a leaf, then a spine, ...): the first fabric vertex's suffix serves the other
// sources below that leaf, a spine's serves every leaf that climbs to it. The route is the same
// link by link, and its latency is summed in the same order. Appends the links to `out`.
template <class DistFn>
RouteInfo walk(const Topology& t, const TopologyGraph& tg, int src_gpu, int dst_gpu, DistFn&& dist,
               std::vector<LinkId>& out, SuffixTable* suffixes = nullptr) {
  const Graph& g = tg.g;
  const int s = t.gpu_vertex(src_gpu), d = t.gpu_vertex(dst_gpu);
  RouteInfo r;
  std::int64_t cur = dist(s);
  if (cur >= kInfCost)
    throw std::logic_error("no route from " + t.vertex(s).name + " to " + t.vertex(d).name);
  std::uint64_t key = tg.dest_key[static_cast<std::size_t>(dst_gpu)];  // D-mod-k digits
  const int src_node = t.vertex(s).node;
  // Inline storage: a walk runs per routed pair (millions), and neither list is long.
  boost::container::small_vector<Graph::edge_descriptor, 8> cand;
  // Fabric vertices reached on this walk and where in `out` their suffix starts.
  boost::container::small_vector<std::pair<SuffixKey, std::size_t>, 4> reached;
  auto record = [&] {
    for (const auto& [k, at] : reached) {
      const std::span<const LinkId> sfx(out.data() + at, out.size() - at);
      int lo = t.vertex(d).node, hi = lo;
      for (LinkId id : sfx) {
        const int n = t.vertex(t.link(id).to).node;
        lo = std::min(lo, n);
        hi = std::max(hi, n);
      }
      suffixes->insert(k, tg.fabric_index[k.vertex], sfx, lo, hi);
    }
  };
  int v = s;
  while (v != d) {
    if (suffixes && tg.fabric_index[v] >= 0) {
      const SuffixKey here{v, dst_gpu, key};  // dst by GPU index (flat slots)
      if (const RouteSuffix* hit = suffixes->find(here, tg.fabric_index[v])) {
        for (LinkId id : suffixes->links(*hit)) {
          out.push_back(id);
          r.latency_s += t.link(id).latency_s;
        }
        if (hit->min_node != src_node || hit->max_node != src_node) r.crosses_nodes = true;
        record();
        return r;
      }
      reached.emplace_back(here, out.size());
    }
    cand.clear();
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
      int w = static_cast<int>(boost::target(*it, g));
      if (w != d && tg.is_gpu[w]) continue;
      std::int64_t dw = dist(w);
      if (dw >= cur) continue;  // cheap reject before touching the edge's properties
      if (dw + g[*it].cost == cur) cand.push_back(*it);
    }
    if (cand.empty()) throw std::logic_error("router lost its way at " + t.vertex(v).name);
    auto e = cand[0];
    if (cand.size() > 1) {
      e = cand[key % cand.size()];
      key /= cand.size();
    }
    LinkId id = g[e].id;
    out.push_back(id);
    r.latency_s += t.link(id).latency_s;
    cur -= g[e].cost;
    v = static_cast<int>(boost::target(e, g));
    if (t.vertex(v).node != src_node) r.crosses_nodes = true;
  }
  if (suffixes) record();
  return r;
}

void check_pair(const Topology& t, int src_gpu, int dst_gpu) {
  if (src_gpu < 0 || dst_gpu < 0 || src_gpu >= t.gpu_count() || dst_gpu >= t.gpu_count())
    throw std::out_of_range("route: GPU index out of range");
  if (src_gpu == dst_gpu) throw std::invalid_argument("route: src and dst must differ");
}

const Graph& node_graph(const TopologyGraph& tg, RouteCache& c, int node) {
  auto it = c.node_graphs.find(node);
  if (it != c.node_graphs.end()) return it->second;
  const int b = tg.node_begin[node], e = tg.node_begin[node + 1];
  Graph ng(static_cast<std::size_t>(e - b));
  for (int i = b; i < e; ++i) {
    int v = tg.node_vertices[i];
    ng[i - b] = tg.g[v];
    for (auto [oi, oend] = boost::out_edges(v, tg.g); oi != oend; ++oi) {
      int w = static_cast<int>(boost::target(*oi, tg.g));
      if (tg.g[w].node == node) boost::add_edge(i - b, tg.slot[w], tg.g[*oi], ng);
    }
  }
  return c.node_graphs.emplace(node, std::move(ng)).first->second;
}

// What makes two servers' in-server subgraphs the same under their slot numbering: per vertex its
// kind, then its in-server links as (target slot, cost).
std::vector<std::int64_t> node_signature(const TopologyGraph& tg, int node) {
  std::vector<std::int64_t> sig;
  for (int i = tg.node_begin[node]; i < tg.node_begin[node + 1]; ++i) {
    const int v = tg.node_vertices[i];
    sig.push_back(static_cast<std::int64_t>(tg.g[v].kind));
    for (auto [oi, oend] = boost::out_edges(v, tg.g); oi != oend; ++oi) {
      const int w = static_cast<int>(boost::target(*oi, tg.g));
      if (tg.g[w].node != node) continue;
      sig.push_back(tg.slot[w]);
      sig.push_back(tg.g[*oi].cost);
    }
    sig.push_back(-1);
  }
  return sig;
}

// The first node whose in-server subgraph equals `node`'s (RouteCache::node_shape).
int node_shape(const TopologyGraph& tg, RouteCache& c, int node) {
  if (c.node_shape.empty()) {
    const int nodes = static_cast<int>(tg.node_begin.size()) - 1;
    c.node_shape.resize(static_cast<std::size_t>(nodes));
    std::map<std::vector<std::int64_t>, int> first;
    for (int n = 0; n < nodes; ++n)
      c.node_shape[static_cast<std::size_t>(n)] =
          first.emplace(node_signature(tg, n), n).first->second;
  }
  return c.node_shape[static_cast<std::size_t>(node)];
}

RouteInfo route_fast(const Topology& t, const TopologyGraph& tg, RouteCache& c, int src_gpu,
                     int dst_gpu, std::vector<LinkId>& out) {
  const Graph& g = tg.g;
  const int d = t.gpu_vertex(dst_gpu);
  const int dnode = g[d].node;
  if (c.entries_ready.empty()) {
    c.entries.resize(static_cast<std::size_t>(t.gpu_count()));
    c.entries_ready.assign(static_cast<std::size_t>(t.gpu_count()), 0);
  }
  RouteCache::FabricEntries& entries = c.entries[static_cast<std::size_t>(dst_gpu)];
  if (!c.entries_ready[static_cast<std::size_t>(dst_gpu)]) {
    for (auto [it, end] = boost::in_edges(d, g); it != end; ++it) {
      int b = static_cast<int>(boost::source(*it, g));
      if (tg.attach[b] < 0 || tg.down_cost[b] >= kInfCost) continue;
      int fi = tg.fabric_index[tg.attach[b]];
      // Under the block rotation R, dist(v -> R^k t) = dist(R^-k v -> t): one field per block-0
      // target serves its whole orbit.
      int shift = 0;
      if (tg.rotation_blocks > 0 && tg.fabric_block[static_cast<std::size_t>(fi)] > 0) {
        shift = tg.rotation_blocks - tg.fabric_block[static_cast<std::size_t>(fi)];
        fi = tg.rotate_fabric(fi, shift);
      }
      auto f = c.fabric_fields.find(fi);
      if (f == c.fabric_fields.end())
        f = c.fabric_fields.emplace(fi, distance_field_to(tg.fabric, fi)).first;
      entries.push_back({&f->second, tg.down_cost[b] + g[*it].cost, shift});
    }
    c.entries_ready[static_cast<std::size_t>(dst_gpu)] = 1;
  }
  const std::vector<std::int64_t>* interior = nullptr;
  auto fab = [&](int v) {
    std::int64_t best = kInfCost;
    const int fi = tg.fabric_index[v];
    for (const auto& [field, tail, shift] : entries) {
      const int at = shift == 0 ? fi : tg.rotate_fabric(fi, shift);
      if ((*field)[at] < kInfCost) best = std::min(best, (*field)[at] + tail);
    }
    return best;
  };
  auto dist_non_gpu = [&](int v) -> std::int64_t {
    if (v == d) return 0;
    if (tg.fabric_index[v] >= 0) return fab(v);
    const auto& vp = g[v];
    if (tg.attach[v] >= 0) {
      std::int64_t best = kInfCost;
      for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
        if (static_cast<int>(boost::target(*it, g)) == d) best = std::min(best, g[*it].cost);
      if (tg.up_cost[v] < kInfCost) {
        std::int64_t up = fab(tg.attach[v]);
        if (up < kInfCost) best = std::min(best, tg.up_cost[v] + up);
      }
      return best;
    }
    if (vp.node != dnode) return kInfCost;  // in-server switches reach only their own server's GPUs
    if (!interior) {
      const int shape = node_shape(tg, c, dnode);
      const std::int64_t key =
          (static_cast<std::int64_t>(shape) << 32) | static_cast<std::uint32_t>(tg.slot[d]);
      auto it = c.interior_fields.find(key);
      if (it == c.interior_fields.end())
        it = c.interior_fields.emplace(key, distance_field_to(node_graph(tg, c, shape), tg.slot[d]))
                 .first;
      interior = &it->second;
    }
    return (*interior)[tg.slot[v]];
  };
  auto dist = [&](int v) -> std::int64_t {
    if (v == d || !tg.is_gpu[v]) return dist_non_gpu(v);
    std::int64_t best = kInfCost;  // the source GPU: one hop to a transit vertex or to dst
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
      int w = static_cast<int>(boost::target(*it, g));
      if (w != d && tg.is_gpu[w]) continue;
      std::int64_t dw = dist_non_gpu(w);
      if (dw < kInfCost) best = std::min(best, dw + g[*it].cost);
    }
    return best;
  };
  return walk(t, tg, src_gpu, dst_gpu, dist, out, &c.suffixes);
}

RouteInfo route_fallback(const Topology& t, const TopologyGraph& tg, RouteCache& c, int src_gpu,
                         int dst_gpu, std::vector<LinkId>& out) {
  const int d = t.gpu_vertex(dst_gpu);
  auto it = c.full_fields.find(d);
  if (it == c.full_fields.end()) {
    if (c.full_fields.size() >= 256)
      c.full_fields.clear();  // bound memory on large explicit graphs
    it = c.full_fields.emplace(d, distance_field_to(tg.g, d)).first;
  }
  const auto& field = it->second;
  return walk(
      t, tg, src_gpu, dst_gpu, [&](int v) { return field[v]; }, out);
}

// A Route from a walk that appends its links and returns the rest.
template <class Walk>
Route as_route(Walk&& walk_into) {
  Route r;
  const RouteInfo info = walk_into(r.links);
  r.latency_s = info.latency_s;
  r.crosses_nodes = info.crosses_nodes;
  return r;
}

}  // namespace

Route route_reference(const Topology& t, int src_gpu, int dst_gpu) {
  check_pair(t, src_gpu, dst_gpu);
  const auto& tg = TopologyBuilder::graph(t);
  auto field = distance_field_to(tg.g, t.gpu_vertex(dst_gpu));
  return as_route([&](std::vector<LinkId>& links) {
    return walk(
        t, tg, src_gpu, dst_gpu, [&](int v) { return field[v]; }, links);
  });
}

const Route& Topology::route(int src_gpu, int dst_gpu) const {
  check_pair(*this, src_gpu, dst_gpu);
  RouteCache& c = TopologyBuilder::cache(*this);
  std::uint64_t key =
      (static_cast<std::uint64_t>(src_gpu) << 32) | static_cast<std::uint32_t>(dst_gpu);
  auto it = c.routes.find(key);
  if (it != c.routes.end()) return it->second;
  Route r =
      as_route([&](std::vector<LinkId>& links) { return route_into(src_gpu, dst_gpu, links); });
  return c.routes.emplace(key, std::move(r)).first->second;
}

RouteInfo Topology::route_into(int src_gpu, int dst_gpu, std::vector<LinkId>& out) const {
  check_pair(*this, src_gpu, dst_gpu);
  RouteCache& c = TopologyBuilder::cache(*this);
  return graph_->decomposable ? route_fast(*this, *graph_, c, src_gpu, dst_gpu, out)
                              : route_fallback(*this, *graph_, c, src_gpu, dst_gpu, out);
}

}  // namespace zerosim
