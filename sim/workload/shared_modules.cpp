// shared_modules(): the process-wide memo of build_modules (see transformer.hpp).
#include <map>
#include <mutex>
#include <tuple>

#include "sim/workload/transformer.hpp"

namespace zerosim {

std::shared_ptr<const std::vector<Module>> shared_modules(const ModelShape& m, std::int64_t tokens,
                                                          int seq) {
  using Key = std::tuple<ModelShape, std::int64_t, int>;
  static std::mutex mu;
  static std::map<Key, std::shared_ptr<const std::vector<Module>>> memo;
  Key key{m, tokens, seq};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
  }
  auto built = std::make_shared<const std::vector<Module>>(build_modules(m, tokens, seq));
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= 256) memo.clear();  // bounded: a sweep over many batch sizes must not pile up
  return memo.emplace(std::move(key), std::move(built)).first->second;
}

}  // namespace zerosim
