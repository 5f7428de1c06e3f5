// The compute model (sim/step/compute_model.hpp) against its closed forms: GEMM wave quantization
// and the memory roofline of skinny GEMMs, FlashAttention's causal half and sequence ramp, the
// memory-bound kernels' bytes, the launch overhead, the optimizer with clipping; a step's
// compute_kernels_s adds up to its compute and recompute.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/step/compute_model.hpp"
#include "sim/step/lower.hpp"
#include "sim/step/simulate.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

CostProfile profile(const char* name) {
  return select_cost_profile(name, load_cluster(name, ClusterOverrides{1, 0, 0, "", 0}));
}

// A GPT-shaped workload without dropout (MPT-1B's shape).
ModelShape mpt_1b() {
  ModelShape m = load_model("gpt-18b");
  m.name = "mpt-1b-shape";
  m.layers = 24;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn = 8192;
  m.vocab = 50368;
  m.dropout = false;
  m.fused_cross_entropy = true;  // LLM Foundry's MPT loss
  return m;
}

}  // namespace

TEST_CASE("GEMM: output tiles quantized over the SMs, never faster than its bytes") {
  const CostProfile p = profile("dgx-a100");
  const double t = p.compute.gemm_tile, sms = p.compute.sm_count;
  REQUIRE(t == 128);
  REQUIRE(sms == 108);
  CHECK(gemm_wave_efficiency(t, t, p) == Approx(1 / sms));
  CHECK(gemm_wave_efficiency(t * sms, t, p) == Approx(1.0));
  CHECK(gemm_wave_efficiency(t * (sms + 1), t, p) == Approx((sms + 1) / (2 * sms)));
  CHECK(gemm_wave_efficiency(t * sms + 1, t, p) == Approx((sms + 1) / (2 * sms)));
  // A large square GEMM: the curve at its FLOPs, one full wave after another.
  const double n = 128 * 108;
  const double flops = 2 * n * n * 4096;
  CHECK(gemm_time(n, n, 4096, p) == Approx(flops / (p.peak_flops * p.gemm_efficiency_at(flops))));
  // A skinny one (one output column): its operands' bytes bind.
  const double m = 1 << 20, k = 4096;
  const double bytes = 2 * (m * k + k * 1 + m * 1);
  CHECK(gemm_time(m, 1, k, p) == Approx(bytes / (p.compute.memory_bound_fraction * p.hbm_Bps)));
  // Same FLOPs, different shapes, different times: the shape matters, not only the FLOPs.
  CHECK(gemm_time(8192, 8192, 128, p) != gemm_time(8192, 128, 8192, p));
}

TEST_CASE("FlashAttention: half the square under the causal mask, ramping with the sequence") {
  const CostProfile p = profile("dgx-a100");
  const auto mods = build_modules(mpt_1b(), 16384, 8192);
  const Module& attn = mods[2];  // layer0.attn
  REQUIRE(attn.name == "layer0.attn");
  REQUIRE(attn.attention_seq == 8192);
  const double f = attn.attention_flops;
  CHECK(f == Approx(4.0 * 16384 * 8192 * 2048));  // the model's count: the full square
  CHECK(attention_executed_flops(attn, AttentionImpl::Flash) == Approx(0.5 * f));
  CHECK(attention_executed_flops(attn, AttentionImpl::Eager) == Approx(f));
  const ComputeParams& c = p.compute;
  const double ramp = 8192 / (8192 + c.flash_seq_half);
  CHECK(flash_efficiency(c.flash_forward_efficiency, 8192, p) ==
        Approx(c.flash_forward_efficiency * ramp));
  CHECK(forward_terms(attn, p, AttentionImpl::Flash).attention_s ==
        Approx(0.5 * f / (p.peak_flops * c.flash_forward_efficiency * ramp)));
  CHECK(backward_terms(attn, p, AttentionImpl::Flash).attention_s ==
        Approx(2.5 * 0.5 * f / (p.peak_flops * c.flash_backward_efficiency * ramp)));
  CHECK(forward_terms(attn, p, AttentionImpl::Eager).attention_s ==
        Approx(f / (p.peak_flops * p.attention_efficiency)));
  CHECK(backward_terms(attn, p, AttentionImpl::Eager).attention_s ==
        Approx(2 * f / (p.peak_flops * p.attention_efficiency)));
}

TEST_CASE("memory-bound kernels: bytes per class at the memory-bound rate, launches counted") {
  const CostProfile p = profile("dgx-a100");
  const ModelShape m = mpt_1b();
  const double T = 4096, h = 2048, f = 8192, V = 50368;
  const auto mods = build_modules(m, 4096, 2048);
  const double rate = p.compute.memory_bound_fraction * p.hbm_Bps;
  const auto mem = [](const ComputeTerms& t, MemoryKernel k) {
    return t.memory_s[static_cast<std::size_t>(k)];
  };
  // fc1: its LayerNorm (4 bytes per element forward; backward 6 for the input's gradient and 4
  // for the weight and bias gradients' second pass), GELU over the MLP width (4, 6),
  // the bias gradient (2 bytes per output element, backward only).
  const Module& fc1 = mods[3];
  REQUIRE(fc1.name == "layer0.fc1");
  const ComputeTerms fw = forward_terms(fc1, p, AttentionImpl::Flash);
  const ComputeTerms bw = backward_terms(fc1, p, AttentionImpl::Flash);
  CHECK(mem(fw, MemoryKernel::Norm) == Approx(4 * T * h / rate));
  CHECK(mem(bw, MemoryKernel::Norm) == Approx(10 * T * h / rate));
  CHECK(mem(fw, MemoryKernel::Activation) == Approx(4 * T * f / rate));
  CHECK(mem(bw, MemoryKernel::Activation) == Approx(6 * T * f / rate));
  CHECK(mem(fw, MemoryKernel::Bias) == 0);
  CHECK(mem(bw, MemoryKernel::Bias) == Approx(2 * T * f / rate));
  CHECK(mem(fw, MemoryKernel::Dropout) == 0);  // no dropout in this model
  // Kernels: the GEMM, the norm, GELU forward; two GEMMs, the norm's two, GELU's, the bias's back.
  // At 4096 tokens the GPU's work outlasts the host's issue of those kernels: nothing added. With a
  // host that takes 1 s per kernel the passes take 3 and 6 s, the excess over the work in launch.
  CHECK(fw.launch_s == 0);
  CHECK(bw.launch_s == 0);
  CostProfile slow_host = p;
  slow_host.compute.kernel_overhead_s = 1;
  const ComputeTerms hfw = forward_terms(fc1, slow_host, AttentionImpl::Flash);
  const ComputeTerms hbw = backward_terms(fc1, slow_host, AttentionImpl::Flash);
  CHECK(hfw.total() == Approx(3));
  CHECK(hbw.total() == Approx(6));
  CHECK(hfw.launch_s == Approx(3 - fw.total()));
  CHECK(fw.gemm_s == Approx(gemm_time(T, f, h, p)));
  CHECK(bw.gemm_s == Approx(gemm_time(T, h, f, p) + gemm_time(h, f, T, p)));
  CHECK(fw.total() == Approx(forward_time(fc1, p, AttentionImpl::Flash)));
  CHECK(bw.total() == Approx(backward_time(fc1, p, AttentionImpl::Flash)));
  // The head: final norm and softmax-cross-entropy over the vocabulary. MPT trains with the fused
  // loss (4 bytes per logit each way, one kernel each way); PyTorch's FP32 cross_entropy under
  // autocast moves 14 + 22 bytes per logit in three kernels each way.
  const ComputeTerms hf = forward_terms(mods.back(), p, AttentionImpl::Flash);
  const ComputeTerms hb = backward_terms(mods.back(), p, AttentionImpl::Flash);
  CHECK(mem(hf, MemoryKernel::Loss) == Approx(4 * T * V / rate));
  CHECK(mem(hb, MemoryKernel::Loss) == Approx(4 * T * V / rate));
  ModelShape torch_loss = m;
  torch_loss.fused_cross_entropy = false;
  const Module head = build_modules(torch_loss, 4096, 2048).back();
  const ComputeTerms tf = forward_terms(head, p, AttentionImpl::Flash);
  const ComputeTerms tb = backward_terms(head, p, AttentionImpl::Flash);
  CHECK(mem(tf, MemoryKernel::Loss) == Approx(14 * T * V / rate));
  CHECK(mem(tb, MemoryKernel::Loss) == Approx(22 * T * V / rate));
  // Two kernels fewer each way: the final norm's (1 forward, 2 backward) and the loss's.
  CHECK(forward_terms(head, slow_host, AttentionImpl::Flash).total() -
            forward_terms(mods.back(), slow_host, AttentionImpl::Flash).total() ==
        Approx(2));
  CHECK(backward_terms(head, slow_host, AttentionImpl::Flash).total() -
            backward_terms(mods.back(), slow_host, AttentionImpl::Flash).total() ==
        Approx(2));
  // The embedding: token and position gathers with the add forward; the dense gradients back.
  const ComputeTerms ef = forward_terms(mods.front(), p, AttentionImpl::Flash);
  CHECK(mem(ef, MemoryKernel::Embedding) == Approx(14 * T * h / rate));
  // Rotary only where positions are rotary (Llama): 4 bytes per q and k element each way.
  const ModelShape llama = load_model("llama-2-7b");
  const auto lm = build_modules(llama, 4096, 4096);
  const double rq = static_cast<double>(llama.q_dim() + llama.kv_dim());
  CHECK(mem(forward_terms(lm[1], p, AttentionImpl::Flash), MemoryKernel::Rotary) ==
        Approx(4 * T * rq / rate));
  CHECK(mem(forward_terms(mods[1], p, AttentionImpl::Flash), MemoryKernel::Rotary) == 0);
}

TEST_CASE("MPT's unpad / pad copies around FlashAttention: bytes and kernels, flash only") {
  const CostProfile p = profile("dgx-a100");
  const ModelShape mpt = load_model("mpt-1b");
  REQUIRE(unpadded_flash_attention(mpt));
  CHECK(!unpadded_flash_attention(mpt_1b()));  // the same shape as family gpt
  const double T = 4096, h = 2048;
  const double rate = p.compute.memory_bound_fraction * p.hbm_Bps;
  const Module attn = build_modules(mpt, 4096, 2048)[2];
  REQUIRE(attn.name == "layer0.attn");
  const auto pad = [](const ComputeTerms& t) {
    return t.memory_s[static_cast<std::size_t>(MemoryKernel::Padding)];
  };
  // Forward: three gathers of T x h (4 bytes per element) and the output's zero fill and
  // index_put (6); backward: the output gradient's gather (4), three zero fills and scatters (6)
  // and the cat into the fused QKV gradient (4 per element of the three).
  CHECK(pad(forward_terms(attn, p, AttentionImpl::Flash)) == Approx((3 * 4 + 6) * T * h / rate));
  CHECK(pad(backward_terms(attn, p, AttentionImpl::Flash)) ==
        Approx((4 + 3 * 6 + 3 * 4) * T * h / rate));
  CHECK(pad(forward_terms(attn, p, AttentionImpl::Eager)) == 0);
  CHECK(pad(backward_terms(attn, p, AttentionImpl::Eager)) == 0);
  // Kernels: with a host that takes 1 s per kernel a pass takes its kernel count; the copies add
  // kPaddingForwardKernels and kPaddingBackwardKernels under flash and none under eager.
  CostProfile slow_host = p;
  slow_host.compute.kernel_overhead_s = 1;
  const Module plain = build_modules(mpt_1b(), 4096, 2048)[2];
  for (const AttentionImpl a : {AttentionImpl::Flash, AttentionImpl::Eager}) {
    const int fwd = a == AttentionImpl::Flash ? kPaddingForwardKernels : 0;
    const int bwd = a == AttentionImpl::Flash ? kPaddingBackwardKernels : 0;
    CHECK(forward_terms(attn, slow_host, a).total() - forward_terms(plain, slow_host, a).total() ==
          Approx(fwd));
    CHECK(backward_terms(attn, slow_host, a).total() -
              backward_terms(plain, slow_host, a).total() ==
          Approx(bwd));
  }
}

TEST_CASE("modules of one compute shape have the same terms; a changed GEMM is another shape") {
  // same_compute_shape lets the step's kernel terms and the lowering's times be computed once per
  // shape: it must imply equal terms, bit for bit.
  for (const char* model : {"gpt-18b", "llama-3-8b", "mpt-7b"})
    for (const char* prof_name : {"dgx2-v100", "dgx-h100"})
      for (const AttentionImpl attention : {AttentionImpl::Eager, AttentionImpl::Flash}) {
        CAPTURE(model);
        CAPTURE(prof_name);
        const ModelShape shape = load_model(model);
        const std::vector<Module> mods = build_modules(shape, 2048, 1024);
        const CostProfile p = profile(prof_name);
        std::size_t shared = 0, distinct = 0;
        for (std::size_t i = 0; i < mods.size(); ++i)
          for (std::size_t j = 0; j < i; ++j) {
            if (!same_compute_shape(mods[i], mods[j])) {
              ++distinct;
              continue;
            }
            ++shared;
            CHECK(forward_terms(mods[i], p, attention) == forward_terms(mods[j], p, attention));
            CHECK(backward_terms(mods[i], p, attention) == backward_terms(mods[j], p, attention));
          }
        CHECK(shared > 0u);  // the layers repeat
        CHECK(distinct > 0u);
      }
  const std::vector<Module> mods = build_modules(load_model("gpt-18b"), 2048, 1024);
  for (const Module& m : mods) {
    CHECK(same_compute_shape(m, m));
    if (m.gemms.empty()) continue;
    Module other = m;
    other.gemms.back().k += 1;
    CHECK_FALSE(same_compute_shape(m, other));
  }
}

TEST_CASE("optimizer: Adam's 28 and clipping's 12 bytes per shard parameter") {
  const CostProfile p = profile("dgx-a100");
  CHECK(optimizer_time(1e9, p) == Approx(40e9 / p.optimizer_Bps));
}

TEST_CASE("a step's compute_kernels_s adds up to its compute and recompute") {
  for (const bool ckpt : {true, false}) {
    Scenario s;
    s.cluster = "dgx-a100";
    s.nodes = 1;
    s.model = "llama-2-7b";
    s.tokens_per_gpu = 8192;
    s.seq_len = 4096;
    s.grad_accum = 3;  // extended from 1 and 2 micro-steps: the terms extend with them
    s.activation_checkpointing = ckpt;
    s.tier = NetworkTier::Analytic;
    const StepResult r = simulate(s);
    const ComputeTerms& k = r.breakdown.compute_kernels;
    CHECK(k.total() == Approx(r.breakdown.compute_s + r.breakdown.recompute_s).epsilon(1e-9));
    CHECK(k.gemm_s > k.attention_s);
    CHECK(k.memory_s[static_cast<std::size_t>(MemoryKernel::Loss)] > 0);
    CHECK(k.memory_s[static_cast<std::size_t>(MemoryKernel::Rotary)] > 0);
    CHECK(k.memory_s[static_cast<std::size_t>(MemoryKernel::Dropout)] == 0);
  }
}
