// SmallVecS: an adjacency_list edge-list selector (Boost.Graph's container_gen customisation) that
// stores each vertex's out- and in-edges in a boost::container::small_vector holding two edges in
// place. A cluster's GPUs and most NICs have two links each way, so their edge lists need no heap
// allocation: building a cluster graph allocated (and destroying it freed) two vectors per vertex,
// most of its cost. Edge order and every graph operation are those of vecS. Private to
// sim/topology, like topology_graph.hpp, its one includer.
#pragma once
#include <boost/container/small_vector.hpp>
#include <boost/graph/adjacency_list.hpp>
#include <cstddef>

namespace zerosim {

struct SmallVecS {};
constexpr std::size_t kInlineEdges = 2;

}  // namespace zerosim

namespace boost {

template <class T>
struct container_gen<zerosim::SmallVecS, T> {
  using type = container::small_vector<T, zerosim::kInlineEdges>;
};
template <>
struct parallel_edge_traits<zerosim::SmallVecS> {
  using type = allow_parallel_edge_tag;
};

// Boost.Graph's container traits (push, erase) dispatch on container_category(c) and
// iterator_stability(c), found by argument-dependent lookup: a small_vector behaves as a vector.
namespace container {
template <class T, std::size_t N, class A, class O>
graph_detail::vector_tag container_category(const small_vector<T, N, A, O>&) {
  return {};
}
template <class T, std::size_t N, class A, class O>
graph_detail::unstable_tag iterator_stability(const small_vector<T, N, A, O>&) {
  return {};
}
}  // namespace container

}  // namespace boost
