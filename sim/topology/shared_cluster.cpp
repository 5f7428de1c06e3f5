// shared_cluster(): the per-thread memo of load_cluster (see topology.hpp).
#include <list>
#include <optional>
#include <tuple>
#include <utility>

#include "sim/core/json_io.hpp"
#include "sim/core/memo.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

std::shared_ptr<const Topology> shared_cluster(const std::string& name_or_file,
                                               const ClusterOverrides& o) {
  using Key = std::tuple<std::string, std::string, int, int, double, std::string, double>;
  constexpr std::size_t kEntries = 8;
  thread_local std::list<std::pair<Key, std::shared_ptr<const Topology>>> lru;  // front = newest

  const std::string path = resolve_data_file("topologies", name_or_file, "--cluster");
  std::optional<std::string> text = read_regular_file(path);
  if (!text)  // unreadable: load_cluster reports it
    return std::make_shared<const Topology>(load_cluster(name_or_file, o));
  Key key{path,       std::move(*text), o.nodes,           o.nics_per_node,
          o.nic_gbps, o.fabric,         o.oversubscription};
  for (auto it = lru.begin(); it != lru.end(); ++it)
    if (it->first == key) {
      lru.splice(lru.begin(), lru, it);
      return it->second;
    }
  auto topo = std::make_shared<const Topology>(load_cluster(name_or_file, o));
  if (topo->gpu_count() > kSharedClusterMaxGpus) return topo;
  lru.emplace_front(std::move(key), topo);
  if (lru.size() > kEntries) lru.pop_back();
  return topo;
}

}  // namespace zerosim
