// Block rotation (Topology::rotation_block_gpus): checks that the builders' layout really is a
// symmetry of the links and of D-mod-k's spine choice, and tabulates each link's block-0 image and
// the rotation's orbits on the fabric (for the router's distance fields). Where the servers break
// it (a partial leaf block), the fabric's rotation alone can still hold: add_fabric_rotation
// checks it and records only the orbits, for the distance fields.
#include <algorithm>

#include "sim/topology/topology_graph.hpp"

namespace zerosim {

namespace {

std::uint64_t pair_key(int from, int to) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
         static_cast<std::uint32_t>(to);
}

// Finds a home link: the first link (lowest id) from -> to with both ends in block 0 or fixed.
// Server links are found by scanning the shorter of from's out-edges and to's in-edges (two or
// three; the graph's edge lists are in link order); links between switches, with hundreds of
// edges, by binary search among those home links. This was a hash map of all of block 0's links,
// a seventh of building a 512-node cluster.
class HomeLinks {
 public:
  HomeLinks(const Graph& g, const RotationLayout& lay) : g_(g), lay_(lay) {
    std::vector<std::pair<std::uint64_t, LinkId>> wide;
    for (std::size_t v = 0; v < boost::num_vertices(g); ++v) {
      if (lay.block_of[v] > 0) continue;
      for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
        const int from = static_cast<int>(v), to = static_cast<int>(boost::target(*it, g));
        if (is_home(from, to) && !narrow(from, to))
          wide.emplace_back(pair_key(from, to), g[*it].id);
      }
    }
    std::sort(wide.begin(), wide.end());  // the first of equal keys is the home link
    wide_keys_.reserve(wide.size());
    wide_links_.reserve(wide.size());
    for (const auto& [key, id] : wide) {
      wide_keys_.push_back(key);
      wide_links_.push_back(id);
    }
  }
  // The home link from -> to, or -1.
  LinkId find(int from, int to) const {
    if (!is_home(from, to)) return -1;
    if (!narrow(from, to)) {
      const std::uint64_t key = pair_key(from, to);
      auto it = std::lower_bound(wide_keys_.begin(), wide_keys_.end(), key);
      return it != wide_keys_.end() && *it == key ? wide_links_[it - wide_keys_.begin()] : -1;
    }
    if (boost::out_degree(from, g_) <= boost::in_degree(to, g_)) {
      for (auto [it, end] = boost::out_edges(from, g_); it != end; ++it)
        if (static_cast<int>(boost::target(*it, g_)) == to) return g_[*it].id;
    } else {
      for (auto [it, end] = boost::in_edges(to, g_); it != end; ++it)
        if (static_cast<int>(boost::source(*it, g_)) == from) return g_[*it].id;
    }
    return -1;
  }

 private:
  static constexpr std::size_t kScanDegree = 4;
  bool is_home(int from, int to) const {
    return lay_.block_of[from] <= 0 && lay_.block_of[to] <= 0;
  }
  bool narrow(int from, int to) const {
    return std::min(boost::out_degree(from, g_), boost::in_degree(to, g_)) <= kScanDegree;
  }
  const Graph& g_;
  const RotationLayout& lay_;
  std::vector<std::uint64_t> wide_keys_;  // sorted
  std::vector<LinkId> wide_links_;
};

// The rotation's orbits on the fabric (TopologyGraph::rotation_blocks): each block-0 fabric vertex
// with its image in every block, by the layout's rep_of. Left empty unless every orbit has exactly
// one member per block.
void add_fabric_orbits(TopologyGraph& tg, const RotationLayout& lay, int blocks) {
  if (blocks < 2) return;
  const std::size_t n = tg.fabric_vertex.size();
  std::vector<int> block(n, -1), at(n, -1), orbit;
  for (std::size_t fi = 0; fi < n; ++fi) {
    const int v = tg.fabric_vertex[fi];
    if (lay.block_of[static_cast<std::size_t>(v)] != 0) continue;
    at[fi] = static_cast<int>(orbit.size());
    orbit.resize(orbit.size() + static_cast<std::size_t>(blocks), -1);
  }
  for (std::size_t fi = 0; fi < n; ++fi) {
    const int v = tg.fabric_vertex[fi];
    const int b = lay.block_of[static_cast<std::size_t>(v)];
    if (b < 0) continue;
    const int rep =
        tg.fabric_index[static_cast<std::size_t>(lay.rep_of[static_cast<std::size_t>(v)])];
    if (rep < 0 || at[static_cast<std::size_t>(rep)] < 0 || b >= blocks) return;
    const int slot_at = at[static_cast<std::size_t>(rep)] + b;
    int& slot = orbit[static_cast<std::size_t>(slot_at)];
    if (slot >= 0) return;
    slot = static_cast<int>(fi);
    block[fi] = b;
    at[fi] = at[static_cast<std::size_t>(rep)];
  }
  if (std::find(orbit.begin(), orbit.end(), -1) != orbit.end()) return;
  tg.rotation_blocks = blocks;
  tg.fabric_block = std::move(block);
  tg.fabric_orbit_at = std::move(at);
  tg.fabric_orbit = std::move(orbit);
}

// Whether the rotation by one block (rotate_fabric(., 1)) maps every fabric edge onto an edge of
// the same cost, the multisets of each vertex's out-edges matching its image's. The rotation is a
// bijection of the fabric vertices (add_fabric_orbits), so this makes it an automorphism of the
// fabric with the costs the router's Dijkstra reads, and of every power of it.
bool fabric_automorphism(const TopologyGraph& tg) {
  using Arc = std::pair<std::size_t, std::int64_t>;
  std::vector<Arc> moved, image;
  for (std::size_t u = 0; u < boost::num_vertices(tg.fabric); ++u) {
    const std::size_t ru = static_cast<std::size_t>(tg.rotate_fabric(static_cast<int>(u), 1));
    if (boost::out_degree(u, tg.fabric) != boost::out_degree(ru, tg.fabric)) return false;
    moved.clear();
    image.clear();
    for (auto [it, end] = boost::out_edges(u, tg.fabric); it != end; ++it)
      moved.emplace_back(tg.rotate_fabric(static_cast<int>(boost::target(*it, tg.fabric)), 1),
                         tg.fabric[*it].cost);
    for (auto [it, end] = boost::out_edges(ru, tg.fabric); it != end; ++it)
      image.emplace_back(boost::target(*it, tg.fabric), tg.fabric[*it].cost);
    std::sort(moved.begin(), moved.end());
    std::sort(image.begin(), image.end());
    if (moved != image) return false;
  }
  return true;
}

}  // namespace

void add_fabric_rotation(Topology& t, const RotationLayout& lay, int blocks) {
  TopologyGraph& tg = TopologyBuilder::graph_to_edit(t);
  if (tg.rotation_blocks > 0) return;
  add_fabric_orbits(tg, lay, blocks);
  if (tg.rotation_blocks > 0 && !fabric_automorphism(tg)) {
    tg.rotation_blocks = 0;
    tg.fabric_block.clear();
    tg.fabric_orbit_at.clear();
    tg.fabric_orbit.clear();
  }
}

void add_block_rotation(Topology& t, const RotationLayout& lay) {
  const int gpus = t.gpu_count();
  if (lay.block_gpus <= 0 || gpus % lay.block_gpus != 0 || gpus / lay.block_gpus < 2) return;
  // The walk's only choice on these fabrics is the spine, key % spines: the rotation must keep it.
  const TopologyGraph& tg = TopologyBuilder::graph(t);
  if (lay.spines < 1) return;
  for (int d = 0; d < gpus; ++d)
    if (tg.dest_key[static_cast<std::size_t>((d + lay.block_gpus) % gpus)] % lay.spines !=
        tg.dest_key[static_cast<std::size_t>(d)] % lay.spines)
      return;
  const HomeLinks homes(tg.g, lay);
  // Every link must be the image of one of block 0's (or of one joining block 0 to the fixed
  // vertices), with the same bandwidth, latency and class.
  std::vector<LinkId> fold(static_cast<std::size_t>(t.link_count()));
  std::vector<int> per_block(static_cast<std::size_t>(gpus / lay.block_gpus), 0);
  for (LinkId id = 0; id < t.link_count(); ++id) {
    const LinkInfo& l = t.link(id);
    const int a = lay.block_of[l.from], b = lay.block_of[l.to];
    if (a >= 0 && b >= 0 && a != b) return;  // a link across blocks: no rotation
    if (std::max(a, b) < 0) return;          // between fixed vertices: not tabulated
    ++per_block[static_cast<std::size_t>(std::max(a, b))];
    const LinkId home = homes.find(lay.rep_of[l.from], lay.rep_of[l.to]);
    if (home < 0) return;
    const LinkInfo& r = t.link(home);
    if (r.bandwidth_Bps != l.bandwidth_Bps || r.latency_s != l.latency_s || r.cls != l.cls) return;
    fold[static_cast<std::size_t>(id)] = home;
  }
  // Each block's links are images of block 0's; equal counts make the map onto.
  for (int n : per_block)
    if (n != per_block[0]) return;
  TopologyBuilder::set_rotation(t, lay.block_gpus, std::move(fold));
  add_fabric_orbits(TopologyBuilder::graph_to_edit(t), lay, gpus / lay.block_gpus);
}

}  // namespace zerosim
