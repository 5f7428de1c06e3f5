// rotation_invariant (folding.hpp): each group rotated, put in a canonical cyclic form (starting at
// its smallest GPU), and looked up among the op's groups in that form.
#include "sim/net/folding.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace zerosim {

namespace {

// Each node's members together in the sequence (not cyclically: the sequence's own order). Linear:
// the world group of 32768 GPUs has 4096 node runs.
bool nodes_contiguous(const std::vector<int>& g, const Topology& topo) {
  std::vector<char> seen(static_cast<std::size_t>(topo.node_count()), 0);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const int node = topo.node_of(g[i]);
    if (i > 0 && node == topo.node_of(g[i - 1])) continue;
    if (seen[static_cast<std::size_t>(node)]) return false;
    seen[static_cast<std::size_t>(node)] = 1;
  }
  return true;
}

std::size_t min_at(const std::vector<int>& g) {
  return static_cast<std::size_t>(std::min_element(g.begin(), g.end()) - g.begin());
}

std::vector<int> rotated_to(const std::vector<int>& g, std::size_t k) {
  std::vector<int> r(g.begin() + static_cast<std::ptrdiff_t>(k), g.end());
  r.insert(r.end(), g.begin(), g.begin() + static_cast<std::ptrdiff_t>(k));
  return r;
}

}  // namespace

bool rotation_invariant(const GroupList& groups, const Topology& topo) {
  const int block = topo.rotation_block_gpus(), n = topo.gpu_count();
  if (block <= 0) return false;
  std::map<std::vector<int>, std::size_t> by_canon;  // canonical form -> group index
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (g.empty()) return false;
    by_canon.emplace(rotated_to(g, min_at(g)), i);
  }
  for (const auto& g : groups) {
    std::vector<int> img(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) img[k] = (g[k] + block) % n;
    const std::size_t k = min_at(img);
    auto it = by_canon.find(rotated_to(img, k));
    if (it == by_canon.end()) return false;
    const auto& h = groups[it->second];
    // img started at h's first GPU: the offset between the two sequences.
    const std::size_t off = (k + img.size() - min_at(h)) % img.size();
    if (off == 0) continue;  // element for element
    if (topo.node_of(img[off - 1]) == topo.node_of(img[off])) return false;
    if (!nodes_contiguous(img, topo) || !nodes_contiguous(h, topo)) return false;
  }
  return true;
}

}  // namespace zerosim
