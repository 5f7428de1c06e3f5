#include "sim/step/compute_model.hpp"

#include <algorithm>
#include <cmath>

namespace zerosim {

double gemm_wave_efficiency(double m, double n, const CostProfile& p) {
  const ComputeParams& c = p.compute;
  const double tiles = std::ceil(m / c.gemm_tile) * std::ceil(n / c.gemm_tile);
  const double sms = c.sm_count;
  return tiles / (std::ceil(tiles / sms) * sms);
}

double gemm_time(double m, double n, double k, const CostProfile& p) {
  const double flops = 2 * m * n * k;
  if (flops <= 0) return 0;
  const double math =
      flops / (p.peak_flops * p.gemm_efficiency_at(flops) * gemm_wave_efficiency(m, n, p));
  // The operands read and the result written once, BF16: a skinny GEMM is bound by them.
  const double bytes = 2 * (m * k + k * n + m * n);
  return std::max(math, bytes / (p.compute.memory_bound_fraction * p.hbm_Bps));
}

double flash_efficiency(double efficiency, double seq, const CostProfile& p) {
  return efficiency * seq / (seq + p.compute.flash_seq_half);
}

double attention_executed_flops(const Module& m, AttentionImpl attention) {
  return attention == AttentionImpl::Flash ? 0.5 * m.attention_flops : m.attention_flops;
}

namespace {

double attention_time(const Module& m, const CostProfile& p, AttentionImpl attention,
                      bool backward) {
  if (m.attention_flops <= 0) return 0;
  const double flops = attention_executed_flops(m, attention) *
                       (backward ? attention_backward_factor(attention) : 1.0);
  if (attention == AttentionImpl::Eager) return flops / (p.peak_flops * p.attention_efficiency);
  const ComputeParams& c = p.compute;
  const double eff = flash_efficiency(
      backward ? c.flash_backward_efficiency : c.flash_forward_efficiency, m.attention_seq, p);
  return flops / (p.peak_flops * eff);
}

// Kernels of the attention core per pass: eager, the score matmul, softmax (with the mask and
// dropout) and the context matmul, three each way in backward; FlashAttention, one forward kernel
// and three backward (the dO x O row sums, the fused backward, the FP32 dQ's conversion).
int attention_kernels(AttentionImpl attention, bool backward) {
  if (attention == AttentionImpl::Eager) return backward ? 5 : 3;
  return backward ? 3 : 1;
}

ComputeTerms pass_terms(const Module& m, const CostProfile& p, AttentionImpl attention,
                        bool backward) {
  ComputeTerms t;
  int kernels = 0;
  for (const Gemm& g : m.gemms) {
    if (backward) {
      // Data gradient (m x k, inner n) and weight gradient (k x n, inner m).
      t.gemm_s += gemm_time(g.m, g.k, g.n, p) + gemm_time(g.k, g.n, g.m, p);
      kernels += 2;
    } else {
      t.gemm_s += gemm_time(g.m, g.n, g.k, p);
      kernels += 1;
    }
  }
  if (m.attention_flops > 0) {
    t.attention_s = attention_time(m, p, attention, backward);
    kernels += attention_kernels(attention, backward);
  }
  const double rate = p.compute.memory_bound_fraction * p.hbm_Bps;
  const auto& bytes = backward ? m.memory.backward_bytes : m.memory.forward_bytes;
  for (std::size_t i = 0; i < bytes.size(); ++i) t.memory_s[i] = bytes[i] / rate;
  kernels += backward ? m.memory.backward_kernels : m.memory.forward_kernels;
  // The unpad / pad copies surround the FlashAttention call only; eager attention runs on the
  // padded tensors.
  constexpr auto kPadding = static_cast<std::size_t>(MemoryKernel::Padding);
  if (attention == AttentionImpl::Eager && bytes[kPadding] > 0) {
    t.memory_s[kPadding] = 0;
    kernels -= backward ? kPaddingBackwardKernels : kPaddingForwardKernels;
  }
  // The host issues the pass's kernels one after another (PyTorch's eager dispatch and the launch,
  // kernel_overhead_s each) while the GPU runs what it has been given: the pass takes the longer
  // of the two, and launch_s is what the host adds beyond the GPU's work.
  const double work = t.total();  // launch_s is still 0 here
  t.launch_s = std::max(0.0, kernels * p.compute.kernel_overhead_s - work);
  return t;
}

}  // namespace

ComputeTerms forward_terms(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return pass_terms(m, p, attention, false);
}

ComputeTerms backward_terms(const Module& m, const CostProfile& p, AttentionImpl attention) {
  return pass_terms(m, p, attention, true);
}

bool same_compute_shape(const Module& a, const Module& b) {
  return a.attention_flops == b.attention_flops && a.attention_seq == b.attention_seq &&
         a.memory == b.memory && a.gemms.size() == b.gemms.size() &&
         std::equal(
             a.gemms.begin(), a.gemms.end(), b.gemms.begin(),
             [](const Gemm& x, const Gemm& y) { return x.m == y.m && x.n == y.n && x.k == y.k; });
}

double optimizer_time(double shard_params, const CostProfile& p) {
  return (kAdamBytesPerParam + kClipBytesPerParam) * shard_params / p.optimizer_Bps;
}

}  // namespace zerosim
