// The compute model: what each kernel class of a module's forward and backward costs on a GPU of
// a cost profile. Every class is a named term (ComputeTerms), and a module's forward or backward
// time is their sum:
//  - GEMMs: FLOPs / (peak x the profile's efficiency curve at those FLOPs x the wave quantization
//    of the GEMM's output tiles over the GPU's SMs), never faster than its operands' bytes at the
//    memory-bound rate (skinny GEMMs);
//  - the attention core: eager, the score and context matmuls at attention_efficiency;
//    FlashAttention, the FLOPs it executes (half the square under the causal mask) at its forward
//    and backward efficiency, which ramps with the sequence (flash_seq_half);
//  - memory-bound kernels (MemoryKernel): bytes read + written / (memory_bound_fraction x HBM);
//  - launch: the host's issue time beyond the GPU's work. The CPU dispatches each kernel of the
//    pass in kernel_overhead_s (PyTorch's eager op dispatch and the CUDA launch) and runs ahead of
//    the GPU, which can only run what has been issued: a pass takes max(GPU work, kernels x
//    kernel_overhead_s), and launch_s is the excess (zero while the GPU is the bottleneck; a small
//    model's tiny kernels make it host-bound).
// The optimizer step and gradient-norm clipping are priced here too (optimizer_time).
#pragma once

#include "sim/profile/cost_profile.hpp"
#include "sim/result/step_result.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

// Output tiles of a GEMM's result (m x n) over the GPU's SMs: tiles / (waves x SMs), in (0, 1]. The
// tile is the profile's gemm_tile square (cuBLAS's large BF16 kernels on Ampere and Hopper tile
// the output in 128 x 128 or 256 x 128 blocks, one per SM at a time).
double gemm_wave_efficiency(double m, double n, const CostProfile& p);
// One GEMM of m x n x k (FLOPs 2mnk) at the profile's rates.
double gemm_time(double m, double n, double k, const CostProfile& p);
// FlashAttention's efficiency at sequence s: efficiency x s / (s + flash_seq_half). Under the
// causal mask the diagonal key tiles run whole, s (s + M) / 2 scores per head for the s^2 / 2 kept,
// with M the kernel's query tile rows: flash_seq_half = M (docs/step-model.md).
double flash_efficiency(double efficiency, double seq, const CostProfile& p);
// FLOPs the attention core executes in a forward: the full square eager (the mask is applied to
// computed scores), half of it for FlashAttention's causal kernels (blocks above the diagonal are
// skipped).
double attention_executed_flops(const Module& m, AttentionImpl attention);

ComputeTerms forward_terms(const Module& m, const CostProfile& p, AttentionImpl attention);
ComputeTerms backward_terms(const Module& m, const CostProfile& p, AttentionImpl attention);
// Whether two modules have the same forward_terms and backward_terms on every profile: the same
// GEMM shapes in order, attention core and memory-bound kernels (all these terms read). A model's
// layers repeat a few shapes, so their terms and times are computed once per shape.
bool same_compute_shape(const Module& a, const Module& b);

// The optimizer step over `shard_params` parameters: Adam's bytes plus gradient-norm clipping's
// (a read of every FP32 gradient for the norm, then a read and write to scale it: 12 bytes per
// parameter), at the profile's optimizer rate.
inline constexpr double kAdamBytesPerParam =
    28;  // FP32 master, momentum, variance r+w; grad, weight
inline constexpr double kClipBytesPerParam = 12;
double optimizer_time(double shard_params, const CostProfile& p);

}  // namespace zerosim
