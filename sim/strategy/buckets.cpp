#include "sim/strategy/buckets.hpp"

#include <algorithm>

namespace zerosim {

std::vector<GradBucket> make_grad_buckets(const std::vector<Module>& modules,
                                          std::int64_t bucket_elems, bool qgz_active, int world,
                                          bool divisibility_fallback) {
  std::vector<GradBucket> out;
  GradBucket cur;
  // Gradients arrive in backward order; the bucket is reduced in ds_id (forward) order.
  auto flush = [&] {
    std::reverse(cur.tensors.begin(), cur.tensors.end());
    out.push_back(std::move(cur));
    cur = GradBucket{};
  };
  for (int mi = static_cast<int>(modules.size()) - 1; mi >= 0; --mi) {
    const auto& params = modules[mi].params;
    for (auto it = params.rbegin(); it != params.rend(); ++it) {
      if (cur.elems() > 0 && cur.elems() + it->elems > bucket_elems) flush();
      const bool q = qgz_active && !it->one_d &&
                     (!divisibility_fallback || it->elems % (2 * std::int64_t{world}) == 0);
      (q ? cur.quantized : cur.fallback) += it->elems;
      cur.tensors.push_back(BucketTensor{it->elems, q});
      cur.ready_module = mi;
    }
  }
  if (cur.elems() > 0) flush();
  return out;
}

}  // namespace zerosim
