// ClusterCache: see cluster_cache.hpp.
#include "sim/topology/cluster_cache.hpp"

#include <utility>

#include "sim/core/json_io.hpp"

namespace zerosim {

std::shared_ptr<const Topology> ClusterCache::get(const std::string& name_or_file,
                                                  const ClusterOverrides& o, FileCache& files) {
  const std::string path = resolve_data_file("topologies", name_or_file, "--cluster", &files);
  // The file's bytes are compared by pointer first: the file cache shares them while unchanged.
  std::shared_ptr<const std::string> text = files.bytes(path);
  if (!text) {  // unreadable: load_cluster reports it
    ++builds_;
    return std::make_shared<const Topology>(load_cluster(name_or_file, o, &files));
  }
  Key key{path, o.nodes, o.nics_per_node, o.nic_gbps, o.fabric, o.oversubscription};
  for (auto it = lru_.begin(); it != lru_.end(); ++it)
    if (it->key == key && (it->text == text || *it->text == *text)) {
      lru_.splice(lru_.begin(), lru_, it);
      return it->topo;
    }
  ++builds_;
  auto topo = std::make_shared<const Topology>(load_cluster(name_or_file, o, &files));
  if (topo->gpu_count() > kMaxGpus) return topo;
  const auto pairs = [](const Entry& e) {
    return std::int64_t{e.topo->gpu_count()} * e.topo->gpu_count();
  };
  lru_.push_front(Entry{std::move(key), std::move(text), topo});
  pairs_ += pairs(lru_.front());
  while (lru_.size() > kEntries || pairs_ > kPairBudget) {
    pairs_ -= pairs(lru_.back());
    lru_.pop_back();
  }
  return topo;
}

}  // namespace zerosim
