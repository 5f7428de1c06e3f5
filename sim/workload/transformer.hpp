// Transformer: what a ModelShape costs. The model is a list of modules in forward order (embedding,
// four submodules per dense layer, head), each owning parameter tensors (the units DeepSpeed
// reduces gradients in), gathering weights before it runs, and running GEMMs and attention whose
// FLOPs are closed forms. An MoE layer's MLP is a router module (with any shared expert) and one
// module per expert: ZeRO gathers every expert, each runs on the top_k / experts share of the
// tokens, so FLOPs count top_k experts per token while parameters, gathers and memory count all.
// For GPT:
//   GPT layer params 12h^2 + 13h; forward FLOPs per layer 24·T·h^2 + 4·T·s·h (Megatron-LM);
//   backward = 2x forward; activation bytes per layer (Korthikanti et al. 2022) 34·T·h + 5·a·s·T
//   for GPT (T tokens per micro-batch, s sequence length, a heads), generalised to GQA and gated
//   MLPs; with FlashAttention 34·T·h + 4·a·T (no s x s tensors: layer_activation_bytes).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/choice.hpp"
#include "sim/workload/model.hpp"

namespace zerosim {

// How a layer's attention core (scores, softmax, context) runs; the scenario's --attention,
// resolved by simulate(). Eager: the score and context matmuls are separate kernels and the softmax
// output (with dropout's mask and output) is stored for backward, a x s x s per sequence. Flash
// (FlashAttention, Dao et al. 2022/2023): one fused kernel that never stores the scores; it keeps
// the output and the row logsumexp, and its backward recomputes the scores from Q and K. Parameters
// and model FLOPs are the same for both.
enum class AttentionImpl : std::uint8_t { Eager, Flash };
const char* to_string(AttentionImpl a);  // "eager", "flash"
// The scenario's --attention: one of the two, or Auto (FlashAttention on Ampere and later GPUs for
// the model families that train with it, trains_with_flash_attention).
enum class AttentionChoice : std::uint8_t { Auto, Flash, Eager };
inline std::span<const ChoiceName<AttentionChoice>> choice_table(AttentionChoice) {
  static constexpr ChoiceName<AttentionChoice> kNames[] = {{AttentionChoice::Auto, "auto"},
                                                           {AttentionChoice::Flash, "flash"},
                                                           {AttentionChoice::Eager, "eager"}};
  return kNames;
}
// Whether the model's usual training stack runs FlashAttention on a GPU that has it (Ampere and
// later), ModelShape::flash_attention: every Hugging Face architecture here (their
// flash_attention_2 / sdpa attention, which dispatches to the flash kernel for 16-bit training;
// an MPT config as its attn_config.attn_impl says), the Llama presets and the MPT presets (LLM
// Foundry's attn_impl: flash) do; the GPT presets (family "gpt", the ZeRO++ paper's
// Megatron-DeepSpeed GPTs, whose flash attention is an opt-in flag) do not.
bool trains_with_flash_attention(const ModelShape& m);
// Attention FLOPs of the backward per forward attention FLOP: 2 eager (dQ, dK from the scores'
// gradient, dV and the scores' gradient from the context's), 2.5 flash (the same four matmuls plus
// QK^T recomputed: 5 matmuls of the forward's 2, as flash-attention's own benchmarks count them,
// benchmarks/benchmark_flash_attention.py: bwd = 2.5 x fwd).
double attention_backward_factor(AttentionImpl a);
// Whether the model's FlashAttention call runs on unpadded (variable-length) tensors: LLM
// Foundry's MPT (family "mpt"; llmfoundry/models/layers/attention.py, flash_attn_fn) unpads Q, K
// and V with flash-attn's bert_padding.unpad_input and pads the output back with pad_input around
// flash_attn_varlen_func, even when no token is padding. The copies are MemoryKernel::Padding.
bool unpadded_flash_attention(const ModelShape& m);
// Kernels of those copies per layer: forward, three gathers (IndexFirstAxis) and the output's
// zero fill and index_put (IndexPutFirstAxis); backward, the output gradient's gather, three zero
// fills and scatters, and the cat that joins dQ, dK and dV into the fused projection's gradient.
inline constexpr int kPaddingForwardKernels = 5, kPaddingBackwardKernels = 8;

struct ParamTensor {
  std::string name;
  std::int64_t elems = 0;
  bool one_d = false;  // biases and norm weights: qgZ falls back to reduce-scatter for these
  // A 2-D tensor's larger dimension (max(shape[0], shape[1])); 0 for 1-D. qgZ's quantization
  // groups follow it (quant_groups.hpp).
  std::int64_t max_dim = 0;
};

// A forward GEMM of a linear layer: Y (m x n) = X (m x k) W (k x n), m the tokens it sees, k the
// layer's input width, n its output width. Backward runs two GEMMs of the same FLOPs: the data
// gradient (m x k from m x n by n x k) and the weight gradient (k x n from k x m by m x n).
struct Gemm {
  std::string name;
  double flops = 0;  // 2·m·n·k
  double m = 0, n = 0, k = 0;
};
// The GEMM of a linear layer from `in` to `out` features over `tokens` tokens.
Gemm linear_gemm(std::string name, double tokens, double in, double out);

// The memory-bound kernels of a training step, priced by the bytes they read and write
// (sim/step/compute_model.hpp): normalisation (LayerNorm / RMSNorm), the MLP's activation (GELU, or
// SiLU and the gate's product), residual adds, bias gradients (the forward's bias add rides in the
// GEMM's epilogue), rotary position embedding, dropout, the loss's softmax-cross-entropy over the
// vocabulary, the embedding's gather and gradient scatter, and the copies that unpad Q, K and V
// for a variable-length FlashAttention call and pad its output back (priced only when the
// attention core runs as FlashAttention: unpadded_flash_attention).
enum class MemoryKernel : std::uint8_t {
  Norm,
  Activation,
  Residual,
  Bias,
  Rotary,
  Dropout,
  Loss,
  Embedding,
  Padding
};
inline constexpr int kMemoryKernelCount = 9;
const char* to_string(MemoryKernel k);  // "norm", "activation", ...

// A module's memory-bound work: bytes read + written per pass by each kernel class, and the
// kernels launched (memory-bound ones; the GEMMs and the attention core are counted by the compute
// model). Closed forms per kernel in transformer.cpp (PyTorch's kernels, BF16 activations).
struct MemoryWork {
  std::array<double, kMemoryKernelCount> forward_bytes{}, backward_bytes{};
  int forward_kernels = 0, backward_kernels = 0;
  void add(MemoryKernel k, double fwd, double bwd, int fwd_kernels, int bwd_kernels) {
    forward_bytes[static_cast<std::size_t>(k)] += fwd;
    backward_bytes[static_cast<std::size_t>(k)] += bwd;
    forward_kernels += fwd_kernels;
    backward_kernels += bwd_kernels;
  }
  bool operator==(const MemoryWork&) const = default;
};

enum class ModuleKind { Embedding, Layer, Head };

struct Module {
  std::string name;  // "embed", "layer3.qkv", "layer3.attn", "layer3.fc1", "layer3.fc2", "head"
  ModuleKind kind = ModuleKind::Layer;
  std::vector<ParamTensor> params;  // tensors owned (gradients produced here)
  std::int64_t gather_elems = 0;    // weights gathered before it runs (the tied head re-gathers
                                    // the word embedding it does not own)
  std::vector<Gemm> gemms;          // forward GEMMs
  double attention_flops = 0;       // forward score + context matmuls (the full s x s square)
  bool recomputed = false;          // re-run in backward under activation checkpointing
  int layer = -1;                   // transformer layer index of a Layer submodule
  int attention_seq = 0;            // the sequence length attention_flops were counted for
  MemoryWork memory;                // memory-bound kernels

  std::int64_t param_elems() const;
  double forward_flops() const;
};

// Parameter tensors of the first transformer layer.
std::vector<ParamTensor> layer_params(const ModelShape& m);
// Parameters per layer, the mean over layers (MoE and dense layers differ).
std::int64_t layer_param_count(const ModelShape& m);
// Every parameter of the model (embedding, layers, final norm, untied head).
std::int64_t total_param_count(const ModelShape& m);
// The largest layer as DeepSpeed's memory estimator counts it (deepspeed/runtime/zero/stage3.py,
// model_to_params: the most parameters one nn.Module owns itself, recurse=False): a linear's weight
// and bias, an embedding table, a norm. Its name ("word_embeddings", "layer0.fc1") and size; the
// q/k/v projections are one linear here (fused, as GPT, GPT-NeoX, Falcon, MPT and Phi-3 build
// them; Llama-style models hold three, each smaller than an MLP or vocabulary matrix).
struct LargestLayer {
  std::string name;
  std::int64_t params = 0;
};
LargestLayer largest_layer(const ModelShape& m);
// Parameters one token uses: all but the routed experts outside its top_k (== total when dense).
std::int64_t active_param_count(const ModelShape& m);
// Layers whose MLP is a mixture of experts.
int moe_layer_count(const ModelShape& m);

// Modules in forward order for a micro-batch of `tokens` tokens per GPU in sequences of `seq`.
std::vector<Module> build_modules(const ModelShape& m, std::int64_t tokens, int seq);

// Forward FLOPs of the whole model for `tokens` tokens (sum over modules): 2 x the active
// parameters of every GEMM (not the embedding lookup) per token, plus attention's matmuls. Three
// times this is a step's model FLOPs without recompute, the numerator of MFU.
double model_forward_flops(const ModelShape& m, std::int64_t tokens, int seq);

// Activation bytes (FP16) of one layer's forward kept for its backward, for a micro-batch of
// `tokens` (the larger of an MoE and a dense layer's). Per GPT layer (T = s·b tokens, a heads):
// eager 34·T·h + 5·a·s·T (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", eq. 1: 11·T·h + 5·a·s·T of attention, 19·T·h of MLP, 4·T·h of norms);
// flash 34·T·h + 4·a·T: the 5·a·s·T of softmax output (2 bytes), dropout mask (1) and dropout
// output (2) become FlashAttention's FP32 logsumexp, 4 bytes per head and token (Dao 2023,
// Algorithm 1: the forward returns O and L; O is the output projection's input, already counted;
// dropout's mask is regenerated from the RNG state in backward).
double layer_activation_bytes(const ModelShape& m, std::int64_t tokens, int seq,
                              AttentionImpl attention);
// Bytes kept per layer under activation checkpointing: the layer's FP16 input.
double layer_checkpoint_bytes(const ModelShape& m, std::int64_t tokens);
// Output layer: FP16 logits plus the FP32 softmax of the loss, and the final norm input.
double head_activation_bytes(const ModelShape& m, std::int64_t tokens);
// Peak activation bytes of a micro-step: with checkpointing, every layer's input plus one layer's
// full activations (during its recompute/backward) plus the head; without, every layer's full
// activations.
double activation_bytes(const ModelShape& m, std::int64_t tokens, int seq, bool checkpointing,
                        AttentionImpl attention);

// Megatron-LM model FLOPs per step that the ZeRO++ evaluation reports with (DESIGN.md):
// factor·B·s·l·h^2·(1 + s/(6h) + V/(16·l·h)), factor 96 with checkpointing, 72 without.
double megatron_step_flops(const ModelShape& m, double sequences, int seq, bool checkpointing);

}  // namespace zerosim
