// shared_cluster(): the per-thread memo of load_cluster (see topology.hpp).
#include <list>
#include <tuple>
#include <utility>

#include "sim/core/json_io.hpp"
#include "sim/core/memo.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

std::shared_ptr<const Topology> shared_cluster(const std::string& name_or_file,
                                               const ClusterOverrides& o) {
  // The file's bytes are compared by pointer first: file_bytes shares them while it is unchanged.
  using Key = std::tuple<std::string, int, int, double, std::string, double>;
  constexpr std::size_t kEntries = 8;
  struct Entry {
    Key key;
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const Topology> topo;
  };
  thread_local std::list<Entry> lru;  // front = newest

  const std::string path = resolve_data_file("topologies", name_or_file, "--cluster");
  std::shared_ptr<const std::string> text = file_bytes(path);
  if (!text)  // unreadable: load_cluster reports it
    return std::make_shared<const Topology>(load_cluster(name_or_file, o));
  Key key{path, o.nodes, o.nics_per_node, o.nic_gbps, o.fabric, o.oversubscription};
  for (auto it = lru.begin(); it != lru.end(); ++it)
    if (it->key == key && (it->text == text || *it->text == *text)) {
      lru.splice(lru.begin(), lru, it);
      return it->topo;
    }
  auto topo = std::make_shared<const Topology>(load_cluster(name_or_file, o));
  if (topo->gpu_count() > kSharedClusterMaxGpus) return topo;
  lru.push_front(Entry{std::move(key), std::move(text), topo});
  if (lru.size() > kEntries) lru.pop_back();
  return topo;
}

}  // namespace zerosim
