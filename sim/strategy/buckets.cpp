#include "sim/strategy/buckets.hpp"

namespace zerosim {

std::vector<GradBucket> make_grad_buckets(const std::vector<Module>& modules,
                                          std::int64_t bucket_elems, bool qgz_active, int world,
                                          bool divisibility_fallback) {
  std::vector<GradBucket> out;
  GradBucket cur;
  for (int mi = static_cast<int>(modules.size()) - 1; mi >= 0; --mi) {
    const auto& params = modules[mi].params;
    for (auto it = params.rbegin(); it != params.rend(); ++it) {
      if (cur.elems() > 0 && cur.elems() + it->elems > bucket_elems) {
        out.push_back(cur);
        cur = GradBucket{};
      }
      const bool q = qgz_active && !it->one_d &&
                     (!divisibility_fallback || it->elems % (2 * std::int64_t{world}) == 0);
      (q ? cur.quantized : cur.fallback) += it->elems;
      cur.ready_module = mi;
    }
  }
  if (cur.elems() > 0) out.push_back(cur);
  return out;
}

}  // namespace zerosim
