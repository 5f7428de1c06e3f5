// SmallVecS edge lists (small_edge_lists.hpp): the topology Graph, with edge lists that hold two
// edges in place, has the same edges in the same out-edge, in-edge and edge-list order as the same
// adjacency_list with std::vector edge lists, for vertices of every degree, also after a copy and
// after reserving (as TopologyBuilder::finish does).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/topology/topology_graph.hpp"

using namespace zerosim;

namespace {

using VecGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps,
                                       EdgeProps, boost::no_property, boost::vecS>;

// (target, id) of v's out-edges and (source, id) of its in-edges, in order.
template <class G>
std::vector<std::int64_t> lists(const G& g, std::size_t v) {
  std::vector<std::int64_t> r;
  for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
    r.push_back(static_cast<std::int64_t>(boost::target(*it, g)));
    r.push_back(g[*it].id);
  }
  r.push_back(-1);
  for (auto [it, end] = boost::in_edges(v, g); it != end; ++it) {
    r.push_back(static_cast<std::int64_t>(boost::source(*it, g)));
    r.push_back(g[*it].id);
  }
  return r;
}

template <class G>
std::vector<std::int64_t> edge_list(const G& g) {
  std::vector<std::int64_t> r;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    r.push_back(static_cast<std::int64_t>(boost::source(*it, g)));
    r.push_back(static_cast<std::int64_t>(boost::target(*it, g)));
    r.push_back(g[*it].id);
    r.push_back(g[*it].cost);
  }
  return r;
}

}  // namespace

TEST_CASE("small edge lists keep vecS's edges and orders") {
  constexpr std::size_t n = 40;
  for (bool reserve : {false, true}) {
    Graph g(n);
    VecGraph ref(n);
    if (reserve)
      for (std::size_t v = 0; v < n; ++v) {
        g.m_vertices[v].m_out_edges.reserve(v % 7);
        g.m_vertices[v].m_in_edges.reserve(v % 5);
      }
    // Degrees from 0 to dozens (vertex 0 is a hub), parallel edges included.
    std::uint64_t x = 12345;
    for (LinkId id = 0; id < 400; ++id) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::size_t a = (x >> 33) % 4 == 0 ? 0 : (x >> 40) % (n / 2), b = (x >> 20) % n;
      const EdgeProps ep{id, static_cast<std::int64_t>(x >> 50)};
      boost::add_edge(a, b, ep, g);
      boost::add_edge(a, b, ep, ref);
    }
    CHECK(boost::num_edges(g) == boost::num_edges(ref));
    CHECK(edge_list(g) == edge_list(ref));
    const Graph copy = g;
    for (std::size_t v = 0; v < n; ++v) {
      CAPTURE(v);
      CHECK(lists(g, v) == lists(ref, v));
      CHECK(lists(copy, v) == lists(ref, v));
    }
  }
}
