// ClusterCache: built clusters for one SimContext. A sweep simulates many scenarios on each
// cluster, and building the graph was a fifth of a small analytic scenario. The key is the cluster
// file's path AND bytes (from the context's FileCache) plus the overrides, so an edited file is
// loaded again. A Topology's route table grows up to one route per GPU pair (a flow-tier
// all-to-all routes every pair: 65k routes at 256 GPUs), so what is kept is bounded by GPU pairs:
// at most kEntries clusters of at most kMaxGpus each, together at most kPairBudget squared GPU
// counts (eight clusters of 256 GPUs, six of 384: a sweep's six NIC rates on one 384-GPU cluster,
// three of 512), least recently used first out. A
// Topology's route cache is its own and not thread-safe: the clusters of one cache are used by one
// thread at a time, as their context is.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <tuple>

#include "sim/core/file_cache.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

class ClusterCache {
 public:
  static constexpr std::size_t kEntries = 8;
  static constexpr int kMaxGpus = 512;
  static constexpr std::int64_t kPairBudget = std::int64_t{6} * 384 * 384;

  // load_cluster(name_or_file, overrides, &files), shared while its key is unchanged.
  std::shared_ptr<const Topology> get(const std::string& name_or_file,
                                      const ClusterOverrides& overrides, FileCache& files);
  // Clusters get() has loaded (not served from the cache) since this cache was made.
  std::size_t builds() const { return builds_; }

 private:
  using Key = std::tuple<std::string, int, int, double, std::string, double>;
  struct Entry {
    Key key;
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const Topology> topo;
  };
  std::list<Entry> lru_;    // front = newest
  std::int64_t pairs_ = 0;  // sum of the kept clusters' squared GPU counts
  std::size_t builds_ = 0;
};

}  // namespace zerosim
