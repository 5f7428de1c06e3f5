#include "sim/strategy/buckets.hpp"

#include <algorithm>
#include <array>

#include "sim/strategy/quant_groups.hpp"

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
      cur.tensors.push_back(BucketTensor{it->elems, q, it->max_dim});
      cur.ready_module = mi;
    }
  }
  if (cur.elems() > 0) flush();
  return out;
}

double qgz_buffer_bytes(const GradBucket& b, int world, int gpus_per_node, int grad_bits) {
  const double N = gpus_per_node, W = world, bits = grad_bits / 8.0;
  std::array<double, 5> prev{};  // the previous quantized tensor's buffers, still bound
  double outputs = 0, peak = 0;
  for (const BucketTensor& t : b.tensors) {
    const double n = static_cast<double>(t.elems);
    if (t.quantized) {
      const double intra = n * bits + 4.0 * static_cast<double>(qgz_intra_groups(t.max_dim, world));
      const double inter = n / N * bits + 4.0 * static_cast<double>(qgz_inter_groups(
                                                    t.max_dim, world, gpus_per_node));
      const std::array<double, 5> cur{intra, intra, inter, inter, 2 * n / N};
      for (std::size_t k = 0; k < cur.size(); ++k) {
        double live = outputs;
        for (std::size_t j = 0; j <= k; ++j) live += cur[j];
        for (std::size_t j = k; j < prev.size(); ++j) live += prev[j];
        peak = std::max(peak, live);
      }
      prev = cur;
    }
    outputs += 2 * n / W;
  }
  return std::max(peak, outputs);
}

}  // namespace zerosim
