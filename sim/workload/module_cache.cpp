// ModuleCache: see module_cache.hpp.
#include "sim/workload/module_cache.hpp"

namespace zerosim {

std::shared_ptr<const std::vector<Module>> ModuleCache::modules(const ModelShape& m,
                                                                std::int64_t tokens, int seq) {
  Key key{m, tokens, seq};
  if (auto it = modules_.find(key); it != modules_.end()) return it->second;
  auto built = std::make_shared<const std::vector<Module>>(build_modules(m, tokens, seq));
  if (modules_.size() >= 256) modules_.clear();  // a sweep over many batch sizes must not pile up
  return modules_.emplace(std::move(key), std::move(built)).first->second;
}

const ModuleCache::Counts& ModuleCache::counts(const ModelShape& m) {
  for (const auto& c : counts_)
    if (std::get<0>(c) == m) return c;
  if (counts_.size() >= 8) counts_.erase(counts_.begin());
  std::int64_t total = 0;
  for (const auto& mod : *modules(m, 1, m.seq)) total += mod.param_elems();  // total_param_count
  return counts_.emplace_back(m, total, layer_param_count(m), active_param_count(m));
}

std::int64_t ModuleCache::total_params(const ModelShape& m) { return std::get<1>(counts(m)); }
std::int64_t ModuleCache::layer_params(const ModelShape& m) { return std::get<2>(counts(m)); }
std::int64_t ModuleCache::active_params(const ModelShape& m) { return std::get<3>(counts(m)); }

}  // namespace zerosim
