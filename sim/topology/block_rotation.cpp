// Block rotation (Topology::rotation_block_gpus): checks that the builders' layout really is a
// symmetry of the links and of D-mod-k's spine choice, and tabulates each link's block-0 image.
#include <algorithm>
#include <unordered_map>

#include "sim/topology/topology_graph.hpp"

namespace zerosim {

namespace {

std::uint64_t pair_key(int from, int to) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
         static_cast<std::uint32_t>(to);
}

}  // namespace

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
  // Block 0's links (and those joining it to the fixed vertices) by endpoints.
  std::unordered_map<std::uint64_t, LinkId> home;
  for (LinkId id = 0; id < t.link_count(); ++id) {
    const LinkInfo& l = t.link(id);
    if (lay.block_of[l.from] <= 0 && lay.block_of[l.to] <= 0)
      home.emplace(pair_key(l.from, l.to), id);
  }
  // Every other link must be the image of one of them, with the same bandwidth, latency and class.
  std::vector<LinkId> fold(static_cast<std::size_t>(t.link_count()));
  std::vector<int> per_block(static_cast<std::size_t>(gpus / lay.block_gpus), 0);
  for (LinkId id = 0; id < t.link_count(); ++id) {
    const LinkInfo& l = t.link(id);
    const int a = lay.block_of[l.from], b = lay.block_of[l.to];
    if (a >= 0 && b >= 0 && a != b) return;  // a link across blocks: no rotation
    if (std::max(a, b) < 0) return;          // between fixed vertices: not tabulated
    ++per_block[static_cast<std::size_t>(std::max(a, b))];
    auto it = home.find(pair_key(lay.rep_of[l.from], lay.rep_of[l.to]));
    if (it == home.end()) return;
    const LinkInfo& r = t.link(it->second);
    if (r.bandwidth_Bps != l.bandwidth_Bps || r.latency_s != l.latency_s || r.cls != l.cls) return;
    fold[static_cast<std::size_t>(id)] = it->second;
  }
  // Each block's links are images of block 0's; equal counts make the map onto.
  for (int n : per_block)
    if (n != per_block[0]) return;
  TopologyBuilder::set_rotation(t, lay.block_gpus, std::move(fold));
}

}  // namespace zerosim
