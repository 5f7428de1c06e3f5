// Model: the shape of a decoder-only transformer and where it comes from: a workload preset
// (workloads/<name>.json), a workload file with the same keys, or a Hugging Face config.json
// (hf_config.hpp: the architecture is chosen by its "model_type"). The plain shape (layers, width,
// heads, MLP width, vocabulary) covers GPT, Llama and MPT; what other architectures add (a head
// width of their own, partial biases, parallel attention, the norms per layer and on queries and
// keys, DeepSeek's low-rank attention, mixture-of-experts MLPs) is ModelShape::arch, at its
// defaults for GPT and Llama.
// Derived quantities (parameters, FLOPs, activation bytes) live in transformer.hpp.
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"

namespace zerosim {

// Multi-head latent attention (DeepSeek-V2/V3): queries (optionally) and keys/values pass through
// low-rank projections; the key/value latent (kv_lora_rank wide, plus one shared rotary key of
// qk_rope_dim) is what is projected up per head.
struct MlaShape {
  int q_lora_rank = 0;                              // 0: queries are a full projection (q_proj)
  int kv_lora_rank = 0;                             // 0: no MLA
  int qk_nope_dim = 0, qk_rope_dim = 0, v_dim = 0;  // per head
  auto operator<=>(const MlaShape&) const = default;
};

// Mixture of experts: an MoE layer's MLP is a router over `experts` MLPs of width expert_ffn, each
// token running top_k of them, plus an optional always-on shared expert. ZeRO shards and gathers
// every expert's weights (any expert may be routed a token), while a token's FLOPs are its top_k
// experts'.
struct MoeShape {
  int experts = 0;  // routed experts per MoE layer; 0: a dense model
  int top_k = 0;
  std::int64_t expert_ffn = 0;
  std::int64_t shared_ffn = 0;  // width of the shared expert (DeepSeek: n_shared x expert width)
  bool shared_gate = false;     // Qwen2-MoE's sigmoid gate (hidden x 1) on the shared expert
  bool router_bias = false;     // DeepSeek-V3's per-expert score correction bias
  // Which layers are MoE: l >= first_dense and l % every == phase and l not in dense_layers.
  int first_dense = 0;  // DeepSeek first_k_dense_replace
  int every = 1, phase = 0;
  std::vector<int> dense_layers;  // Qwen2-MoE mlp_only_layers
  bool is_moe_layer(int l) const;
  auto operator<=>(const MoeShape&) const = default;
};

// RMSNorms on the attention's queries and keys before RoPE: none, one per head (head_dim weights,
// shared by the heads: Qwen 3, Gemma 3) or one over the whole projection (q_dim and kv_dim
// weights: OLMo 2).
enum class QkNorm : std::uint8_t { None, PerHead, Full };
const char* to_string(QkNorm q);  // "none", "head", "full"

// What an architecture adds to the GPT/Llama shape; every default is GPT's and Llama's.
struct ArchShape {
  std::string activation;     // Hugging Face hidden_act as given ("" for workload presets)
  std::int64_t head_dim = 0;  // 0: hidden / heads (Gemma and others give their own)
  bool attn_bias = false;     // q, k, v and output projections have biases (Llama's attention_bias)
  bool qkv_bias = false;      // q, k, v only (Qwen2)
  bool mlp_bias = false;      // MLP projections (Llama's mlp_bias)
  bool parallel_attn = false;  // attention and MLP read the same input (GPT-NeoX, Falcon)
  int layer_norms = 2;         // per layer: 1 (Falcon-7B's shared one), 2, 4 (Gemma 2)
  bool norm_bias = true;       // a LayerNorm has its bias (false: MPT's no_bias, which removes
                               // every bias, the norms' included)
  QkNorm qk_norm = QkNorm::None;
  MlaShape mla;
  MoeShape moe;
  auto operator<=>(const ArchShape&) const = default;
};

struct ModelShape {
  std::string name;
  std::string family = "gpt";  // "gpt" (LayerNorm, biases, GeLU MLP, learned positions, tied
                               // embeddings, dropout, eager attention), "mpt" (gpt's layers without
                               // dropout, FlashAttention: LLM Foundry's MPT) or "llama" (RMSNorm,
                               // no biases, gated SiLU MLP, rotary positions, untied head, no
                               // dropout, FlashAttention); a Hugging Face config's model_type
                               // (hf_config.hpp)
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; == heads for multi-head attention
  std::int64_t ffn = 0;
  std::int64_t vocab = 0;
  // The training sequence length when the run names none, and why it is that ("": the workload's
  // "seq"; a Hugging Face config's rule, hf_config.hpp). A learned position table has one row per
  // position of the run's sequence (with_sequence_length).
  int seq = 0;
  std::string seq_source;
  // Rows of a learned position table a Hugging Face config fixes (GPT-2's n_positions, MPT's
  // max_seq_len); 0: one row per position of the run's sequence (the presets).
  int position_rows = 0;
  bool gated_ffn = false;
  bool bias = true;
  bool layernorm = true;  // false: RMSNorm (weight only)
  bool tied_embeddings = true;
  bool learned_positions = true;
  bool dropout = true;
  // Under --attention auto, whether its training stack runs FlashAttention on a GPU that has it
  // (transformer.hpp, trains_with_flash_attention).
  bool flash_attention = false;
  // The loss is one fused softmax-cross-entropy kernel over the BF16 logits each way (flash-attn's
  // xentropy CrossEntropyLoss, LLM Foundry's default loss_fn "fused_crossentropy" for MPT) instead
  // of PyTorch's cross_entropy in FP32 under autocast (transformer.cpp, build_modules).
  bool fused_cross_entropy = false;
  ArchShape arch;
  std::string source;  // where the shape comes from

  std::int64_t head_dim() const { return arch.head_dim > 0 ? arch.head_dim : hidden / heads; }
  std::int64_t q_dim() const { return head_dim() * heads; }
  std::int64_t kv_dim() const { return head_dim() * kv_heads; }
  bool moe() const { return arch.moe.experts > 0; }
  auto operator<=>(const ModelShape&) const = default;  // cache keys (ModuleCache)
};

// Shape limits far above any real model keep the 64-bit parameter and FLOP counts from overflowing
// (layers x 12 h^2 stays below 2^62): a larger value is a typo, not a model.
inline constexpr std::int64_t kMaxLayers = 1 << 16, kMaxHidden = 1 << 20, kMaxFfn = 1 << 22,
                              kMaxVocab = 1 << 24, kMaxExperts = 1 << 12,
                              kMaxExpertModules = 1 << 17;  // experts x layers
// An integer in [1, max], else an InputError naming the key.
std::int64_t read_model_dim(const JsonReader& r, std::int64_t max);
// "norm": true for "layernorm", false for "rmsnorm", else an InputError naming the key.
bool read_layernorm(const JsonReader& r);
// "positions": true for "learned", false for "rotary", else an InputError naming the key.
bool read_learned_positions(const JsonReader& r);

// The model as a run of sequence length `seq` builds it: a learned position table that no config
// fixes (position_rows 0) gets one row per position (LLM Foundry sets MPT's max_seq_len,
// Megatron-LM's examples their --max-position-embeddings, to the run's sequence length), so its
// parameter count follows the run; any other model is unchanged.
ModelShape with_sequence_length(ModelShape m, int seq);

// Parses a workload JSON (strict keys; see workloads/*.json; "arch" as to_json writes it) or, when
// the object has a Hugging Face key ("hidden_size", "model_type", ...), a Hugging Face config.json
// (hf_config.hpp).
ModelShape parse_model(const json& j, const std::string& file);
// --model NAME|FILE: a preset name under workloads/ or a path. `files`: parsed once per distinct
// file content there; null: read and parsed afresh.
ModelShape load_model(const std::string& name_or_file, FileCache* files = nullptr);
// The workload JSON; "arch" only when it is not the default.
json to_json(const ModelShape& m);
json to_json(const ArchShape& a);
// Reads "arch" strictly (the inverse of to_json(ArchShape)).
ArchShape read_arch(const JsonReader& r);

}  // namespace zerosim
