#include "sim/workload/hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <span>
#include <string_view>

namespace zerosim {

namespace {

// The families read here. Several model_types share one: Mistral's config and layers are Llama's.
enum class Kind {
  Llama,
  Qwen2,
  Qwen3,
  Gemma,
  Gemma2,
  Gemma3Text,
  Gemma3,
  Olmo2,
  Starcoder2,
  Phi3,
  Gpt2,
  GptNeox,
  Falcon,
  Mpt,
  Mixtral,
  Qwen2Moe,
  Qwen3Moe,
  DeepseekV2,
  DeepseekV3
};

struct Known {
  std::string_view model_type;  // as transformers registers it
  std::string_view class_name;  // its causal-LM class in "architectures"
  Kind kind;
};

constexpr Known kKnown[] = {
    {"llama", "LlamaForCausalLM", Kind::Llama},
    {"mistral", "MistralForCausalLM", Kind::Llama},
    {"qwen2", "Qwen2ForCausalLM", Kind::Qwen2},
    {"qwen3", "Qwen3ForCausalLM", Kind::Qwen3},
    {"gemma", "GemmaForCausalLM", Kind::Gemma},
    {"gemma2", "Gemma2ForCausalLM", Kind::Gemma2},
    {"gemma3_text", "Gemma3ForCausalLM", Kind::Gemma3Text},
    // Gemma 3's multimodal configs: the decoder is its text_config.
    {"gemma3", "Gemma3ForConditionalGeneration", Kind::Gemma3},
    {"olmo2", "Olmo2ForCausalLM", Kind::Olmo2},
    {"starcoder2", "Starcoder2ForCausalLM", Kind::Starcoder2},
    {"phi3", "Phi3ForCausalLM", Kind::Phi3},
    {"gpt2", "GPT2LMHeadModel", Kind::Gpt2},
    {"gpt_neox", "GPTNeoXForCausalLM", Kind::GptNeox},
    {"falcon", "FalconForCausalLM", Kind::Falcon},
    // Falcon's first releases, before it joined transformers (same layers, older key names).
    {"RefinedWebModel", "RWForCausalLM", Kind::Falcon},
    {"RefinedWeb", "RWForCausalLM", Kind::Falcon},
    {"mpt", "MPTForCausalLM", Kind::Mpt},
    {"mixtral", "MixtralForCausalLM", Kind::Mixtral},
    {"qwen2_moe", "Qwen2MoeForCausalLM", Kind::Qwen2Moe},
    {"qwen3_moe", "Qwen3MoeForCausalLM", Kind::Qwen3Moe},
    {"deepseek_v2", "DeepseekV2ForCausalLM", Kind::DeepseekV2},
    {"deepseek_v3", "DeepseekV3ForCausalLM", Kind::DeepseekV3},
};

// Activations of transformers' ACT2FN (and the names configs use for them). The activation does
// not change a count, but an unknown one means a config this reader was not written for.
constexpr std::string_view kActivations[] = {
    "silu",        "swish",         "gelu",    "gelu_new",   "gelu_fast", "gelu_pytorch_tanh",
    "gelu_python", "gelu_accurate", "gelu_10", "quick_gelu", "relu",      "relu2",
    "relu6",       "leaky_relu",    "tanh",    "sigmoid",    "mish",      "linear"};

const Known* by_model_type(std::string_view t) {
  for (const auto& k : kKnown)
    if (k.model_type == t) return &k;
  return nullptr;
}

const Known* by_class(std::string_view c) {
  for (const auto& k : kKnown)
    if (k.class_name == c) return &k;
  return nullptr;
}

// A key with a JSON null counts as absent (HF writes e.g. "q_lora_rank": null for "none").
bool given(const JsonReader& r, std::string_view key) {
  return r.has(key) && !r.value()[std::string(key)].is_null();
}

// The first of `keys` that is given (GPT-2 and Falcon configs have older aliases).
std::string_view key_of(const JsonReader& r, std::initializer_list<std::string_view> keys) {
  for (auto k : keys)
    if (given(r, k)) return k;
  return *keys.begin();  // reported as missing under its main name
}

std::int64_t dim(const JsonReader& r, std::string_view key, std::int64_t max) {
  return read_model_dim(r.at(key), max);
}
std::int64_t dim_or(const JsonReader& r, std::string_view key, std::int64_t fallback,
                    std::int64_t max) {
  return given(r, key) ? dim(r, key, max) : fallback;
}
int count_or(const JsonReader& r, std::string_view key, int fallback) {
  return given(r, key) ? r.at(key).get_int32_at_least(0) : fallback;
}
bool flag_or(const JsonReader& r, std::string_view key, bool fallback) {
  return given(r, key) ? r.at(key).get_bool() : fallback;
}
bool any_positive(const JsonReader& r, std::initializer_list<std::string_view> keys,
                  double fallback) {
  for (auto k : keys)
    if ((given(r, k) ? r.at(k).get_nonnegative() : fallback) > 0) return true;
  return false;
}

// The string at `key`, one of `names` (`fallback` when absent), else an InputError naming the key,
// the value as `what` and the supported names.
std::string one_of(const JsonReader& r, std::string_view key, std::string_view fallback,
                   std::span<const std::string_view> names, std::string_view what = "value") {
  if (!given(r, key)) return std::string(fallback);
  std::string v = r.at(key).get_string();
  std::string list;
  for (auto n : names) {
    if (n == v) return v;
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  r.at(key).fail(fmt::format("unsupported {} \"{}\" (supported: {})", what, v, list));
  return v;
}
std::string one_of(const JsonReader& r, std::string_view key, std::string_view fallback,
                   std::initializer_list<std::string_view> names) {
  return one_of(r, key, fallback, std::span(names.begin(), names.size()));
}

// hidden_act and its aliases, one of kActivations.
std::string activation(const JsonReader& r, std::string_view key, std::string_view fallback) {
  return one_of(r, key, fallback, kActivations, "activation");
}

const Known& architecture(const JsonReader& r) {
  const Known* from_class = nullptr;
  std::string class_name;
  if (given(r, "architectures")) {
    const auto a = r.at("architectures");
    if (a.array_size() > 0) {
      class_name = a.at(std::size_t{0}).get_string();
      from_class = by_class(class_name);
    }
  }
  if (given(r, "model_type")) {
    const auto t = r.at("model_type");
    const std::string type = t.get_string();
    const Known* k = by_model_type(type);
    if (k == nullptr)
      t.fail(fmt::format("unsupported model_type \"{}\" (supported: {})", type,
                         supported_hf_model_types()));
    if (from_class != nullptr && from_class->kind != k->kind)
      t.fail(
          fmt::format("model_type \"{}\" contradicts architectures[0] \"{}\"", type, class_name));
    return *k;
  }
  if (from_class != nullptr) return *from_class;
  if (!class_name.empty())
    r.at("architectures")
        .at(std::size_t{0})
        .fail(fmt::format("unsupported architecture \"{}\" and no model_type (supported "
                          "model_type: {})",
                          class_name, supported_hf_model_types()));
  r.fail(fmt::format("missing model_type (supported: {})", supported_hf_model_types()));
  return kKnown[0];
}

// The Llama-like families' shape (all but GPT-2, GPT-NeoX and Falcon): RMSNorm, no biases, gated
// MLP, rotary positions, no dropout.
void llama_like(ModelShape& m, const JsonReader& r, bool tied_default) {
  m.family = "llama";
  m.gated_ffn = true;
  m.bias = false;
  m.layernorm = false;
  m.learned_positions = false;
  m.dropout = false;
  m.hidden = dim(r, "hidden_size", kMaxHidden);
  m.layers = static_cast<int>(dim(r, "num_hidden_layers", kMaxLayers));
  m.heads = r.at("num_attention_heads").get_int32_at_least(1);
  // HF semantics: a config without num_key_value_heads has multi-head attention.
  m.kv_heads =
      given(r, "num_key_value_heads") ? r.at("num_key_value_heads").get_int32_at_least(1) : m.heads;
  m.ffn = dim(r, "intermediate_size", kMaxFfn);
  m.vocab = dim(r, "vocab_size", kMaxVocab);
  m.seq = r.at("max_position_embeddings").get_int32_at_least(1);
  m.tied_embeddings = flag_or(r, "tie_word_embeddings", tied_default);
  m.arch.head_dim = dim_or(r, "head_dim", 0, kMaxHidden);
  m.arch.activation = activation(r, "hidden_act", "silu");
}

void read_moe_layers(MoeShape& e, const JsonReader& r, int layers) {
  if (!given(r, "mlp_only_layers")) return;
  const auto list = r.at("mlp_only_layers");
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const auto l = list.at(i);
    const auto v = l.get_int_at_least(0);
    if (v >= layers) l.fail(fmt::format("must be a layer index below {} (got {})", layers, v));
    e.dense_layers.push_back(static_cast<int>(v));
  }
}

void read_top_k(MoeShape& e, const JsonReader& r) {
  const auto k = r.at("num_experts_per_tok");
  e.top_k = k.get_int32_at_least(1);
  if (e.top_k > e.experts)
    k.fail(fmt::format("must be at most the number of experts ({}; got {})", e.experts, e.top_k));
}

void gemma(ModelShape& m, const JsonReader& r, Kind kind) {
  ArchShape& a = m.arch;
  llama_like(m, r, true);
  if (a.head_dim == 0) a.head_dim = 256;
  a.activation = activation(r, given(r, "hidden_activation") ? "hidden_activation" : "hidden_act",
                            "gelu_pytorch_tanh");
  a.attn_bias = flag_or(r, "attention_bias", false);
  if (kind == Kind::Gemma) return;
  a.layer_norms = 4;  // pre and post norm around attention and MLP
  // Gemma 3: RMSNorm on each head's query and key (Gemma3Attention q_norm, k_norm).
  if (kind != Kind::Gemma2) a.qk_norm = QkNorm::PerHead;
}

void mixtral(ModelShape& m, const JsonReader& r) {
  MoeShape& e = m.arch.moe;
  llama_like(m, r, false);
  e.experts = static_cast<int>(dim(r, "num_local_experts", kMaxExperts));
  read_top_k(e, r);
  e.expert_ffn = m.ffn;
}

// Qwen2-MoE, and Qwen3-MoE: no q/k/v biases but RMSNorms on each head's query and key, no shared
// expert (its config has no shared_expert_intermediate_size).
void qwen_moe(ModelShape& m, const JsonReader& r, Kind kind) {
  MoeShape& e = m.arch.moe;
  llama_like(m, r, false);
  m.arch.qkv_bias = kind == Kind::Qwen2Moe;
  if (kind == Kind::Qwen3Moe) m.arch.qk_norm = QkNorm::PerHead;
  e.experts = static_cast<int>(dim(r, "num_experts", kMaxExperts));
  read_top_k(e, r);
  e.expert_ffn = dim(r, "moe_intermediate_size", kMaxFfn);
  e.shared_ffn = dim_or(r, "shared_expert_intermediate_size", 0, kMaxFfn);
  e.shared_gate = e.shared_ffn > 0;
  // Layer l is sparse when (l + 1) % decoder_sparse_step == 0 (Qwen2MoeDecoderLayer).
  e.every = static_cast<int>(dim_or(r, "decoder_sparse_step", 1, kMaxLayers));
  e.phase = e.every - 1;
  read_moe_layers(e, r, m.layers);
}

void deepseek(ModelShape& m, const JsonReader& r) {
  ArchShape& a = m.arch;
  llama_like(m, r, false);
  m.kv_heads = m.heads;  // MLA: every head has its own key and value, from the shared latent
  a.attn_bias = flag_or(r, "attention_bias", false);
  a.mla.q_lora_rank =
      given(r, "q_lora_rank") ? static_cast<int>(dim(r, "q_lora_rank", kMaxHidden)) : 0;
  a.mla.kv_lora_rank = static_cast<int>(dim(r, "kv_lora_rank", kMaxHidden));
  a.mla.qk_nope_dim = static_cast<int>(dim(r, "qk_nope_head_dim", kMaxHidden));
  a.mla.qk_rope_dim = static_cast<int>(dim(r, "qk_rope_head_dim", kMaxHidden));
  a.mla.v_dim = static_cast<int>(dim(r, "v_head_dim", kMaxHidden));
  if (!given(r, "n_routed_experts")) return;
  a.moe.experts = static_cast<int>(dim(r, "n_routed_experts", kMaxExperts));
  read_top_k(a.moe, r);
  a.moe.expert_ffn = dim(r, "moe_intermediate_size", kMaxFfn);
  a.moe.shared_ffn = count_or(r, "n_shared_experts", 0) * a.moe.expert_ffn;
  // Layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0.
  a.moe.first_dense = count_or(r, "first_k_dense_replace", 0);
  a.moe.every = static_cast<int>(dim_or(r, "moe_layer_freq", 1, kMaxLayers));
  a.moe.router_bias = given(r, "topk_method") && r.at("topk_method").get_string() == "noaux_tc";
}

void gpt2(ModelShape& m, const JsonReader& r) {
  m.family = "gpt2";
  m.hidden = dim(r, key_of(r, {"n_embd", "hidden_size"}), kMaxHidden);
  m.layers = static_cast<int>(dim(r, key_of(r, {"n_layer", "num_hidden_layers"}), kMaxLayers));
  m.heads = r.at(key_of(r, {"n_head", "num_attention_heads"})).get_int32_at_least(1);
  m.kv_heads = m.heads;
  m.ffn = dim_or(r, "n_inner", 4 * m.hidden, kMaxFfn);  // null: 4h
  m.vocab = dim(r, "vocab_size", kMaxVocab);
  m.seq = r.at(key_of(r, {"n_positions", "max_position_embeddings"})).get_int32_at_least(1);
  m.position_rows = m.seq;   // wpe: one row per position up to n_positions
  m.tied_embeddings = true;  // GPT2LMHeadModel always ties its head
  m.dropout = any_positive(r, {"resid_pdrop", "embd_pdrop", "attn_pdrop"}, 0.1);
  m.arch.activation = activation(r, "activation_function", "gelu_new");
}

void gpt_neox(ModelShape& m, const JsonReader& r) {
  ArchShape& a = m.arch;
  m.family = "gpt_neox";
  m.hidden = dim(r, "hidden_size", kMaxHidden);
  m.layers = static_cast<int>(dim(r, "num_hidden_layers", kMaxLayers));
  m.heads = r.at("num_attention_heads").get_int32_at_least(1);
  m.kv_heads = m.heads;
  m.ffn = dim(r, "intermediate_size", kMaxFfn);
  m.vocab = dim(r, "vocab_size", kMaxVocab);
  m.seq = r.at("max_position_embeddings").get_int32_at_least(1);
  m.bias = flag_or(r, "attention_bias", true);  // every linear layer but the head
  a.mlp_bias = true;
  m.learned_positions = false;  // rotary on rotary_pct of each head
  m.tied_embeddings = flag_or(r, "tie_word_embeddings", false);
  m.dropout = any_positive(r,
                           {"attention_dropout", "hidden_dropout", "attention_probs_dropout_prob",
                            "hidden_dropout_prob"},
                           0);
  a.parallel_attn = flag_or(r, "use_parallel_residual", true);
  a.activation = activation(r, "hidden_act", "gelu");
}

void falcon(ModelShape& m, const JsonReader& r) {
  ArchShape& a = m.arch;
  m.family = "falcon";
  m.hidden = dim(r, "hidden_size", kMaxHidden);
  m.layers = static_cast<int>(dim(r, key_of(r, {"num_hidden_layers", "n_layer"}), kMaxLayers));
  m.heads = r.at(key_of(r, {"num_attention_heads", "n_head"})).get_int32_at_least(1);
  const bool new_arch = flag_or(r, "new_decoder_architecture", false);
  if (new_arch)
    m.kv_heads = r.at(key_of(r, {"num_kv_heads", "n_head_kv"})).get_int32_at_least(1);
  else
    m.kv_heads = flag_or(r, "multi_query", true) ? 1 : m.heads;
  m.ffn = dim_or(r, "ffn_hidden_size", 4 * m.hidden, kMaxFfn);
  m.vocab = dim(r, "vocab_size", kMaxVocab);
  m.seq = given(r, "max_position_embeddings")
              ? r.at("max_position_embeddings").get_int32_at_least(1)
              : 2048;  // the RW configs have none: Falcon was trained on 2048 tokens
  m.bias = flag_or(r, "bias", false);
  m.learned_positions = false;  // rotary or ALiBi, neither with parameters
  m.tied_embeddings = flag_or(r, "tie_word_embeddings", true);
  m.dropout = any_positive(r, {"attention_dropout", "hidden_dropout"}, 0);
  a.parallel_attn = new_arch || flag_or(r, "parallel_attn", true);
  // One norm shared by attention and MLP, or (new architecture) one for each.
  a.layer_norms = new_arch ? count_or(r, "num_ln_in_parallel_attn", 2) : (a.parallel_attn ? 1 : 2);
  if (a.layer_norms < 1 || a.layer_norms > 2)
    r.at("num_ln_in_parallel_attn").fail("must be 1 or 2");
  a.activation = activation(r, "activation", "gelu");
}

// A nested settings object (MPT's attn_config, ffn_config); absent or null reads as empty.
JsonReader section(const JsonReader& r, std::string_view key) {
  static const json kEmpty = json::object();
  if (!given(r, key)) return JsonReader(kEmpty, r.file(), r.path() + "/" + std::string(key));
  JsonReader s = r.at(key);
  if (!s.value().is_object())
    s.fail(fmt::format("must be an object, not {}", s.value().type_name()));
  return s;
}

// MPT (MosaicML): the layers LLM Foundry's MPTForCausalLM builds from the config (the code these
// configs ship with), absent keys at transformers' MptConfig defaults. Pre-norm blocks with a
// fused Wqkv, an MLP of expansion_ratio x d_model (GELU, or gated for ffn_type mptglu), the head
// tied to wte; no_bias removes every bias, the norms' included. A learned position table (wpe,
// max_seq_len rows) exists when learned_pos_emb is set and neither ALiBi nor RoPE gives the
// positions (configuration_mpt.py turns learned_pos_emb off for them).
void mpt(ModelShape& m, const JsonReader& r) {
  ArchShape& a = m.arch;
  const JsonReader attn = section(r, "attn_config");
  m.family = "mpt";
  m.hidden = dim(r, "d_model", kMaxHidden);
  m.layers = static_cast<int>(dim(r, "n_layers", kMaxLayers));
  m.heads = r.at("n_heads").get_int32_at_least(1);
  const std::string attn_type =
      one_of(attn, "attn_type", "multihead_attention",
             {"multihead_attention", "multiquery_attention", "grouped_query_attention"});
  m.kv_heads = m.heads;
  if (attn_type == "multiquery_attention") m.kv_heads = 1;
  if (attn_type == "grouped_query_attention")
    m.kv_heads = static_cast<int>(dim_or(attn, "kv_n_heads", 1, kMaxHidden));
  const JsonReader ffn = section(r, "ffn_config");
  m.gated_ffn = one_of(ffn, "ffn_type", "mptmlp", {"mptmlp", "mptglu"}) == "mptglu";
  if (given(ffn, "ffn_hidden_size")) {
    m.ffn = dim(ffn, "ffn_hidden_size", kMaxFfn);
  } else {
    const double ratio = given(r, "expansion_ratio") ? r.at("expansion_ratio").get_positive() : 4.0;
    const double width = ratio * static_cast<double>(m.hidden);
    if (width != std::floor(width) || width > kMaxFfn)
      r.at("expansion_ratio")
          .fail(
              fmt::format("expansion_ratio x d_model ({} x {}) must be a whole width of at most {}",
                          ratio, m.hidden, kMaxFfn));
    m.ffn = static_cast<std::int64_t>(width);
  }
  m.vocab = dim(r, "vocab_size", kMaxVocab);
  m.seq = given(r, "max_seq_len") ? r.at("max_seq_len").get_int32_at_least(1) : 2048;
  m.bias = !flag_or(r, "no_bias", true);
  const std::string norm = one_of(r, "norm_type", "low_precision_layernorm",
                                  {"layernorm", "low_precision_layernorm", "rmsnorm",
                                   "low_precision_rmsnorm", "triton_rmsnorm"});
  m.layernorm = norm.find("layernorm") != std::string::npos;
  a.norm_bias = m.bias;
  const bool alibi = flag_or(attn, "alibi", true), rope = flag_or(attn, "rope", false);
  m.learned_positions = flag_or(r, "learned_pos_emb", true) && !alibi && !rope;
  if (m.learned_positions) m.position_rows = m.seq;  // wpe: max_seq_len rows
  m.tied_embeddings = flag_or(r, "tie_word_embeddings", true);
  m.dropout =
      any_positive(r, {"resid_pdrop", "emb_pdrop"}, 0) || any_positive(attn, {"attn_pdrop"}, 0);
  m.flash_attention = one_of(attn, "attn_impl", "torch", {"torch", "flash", "triton"}) != "torch";
  m.fused_cross_entropy = true;  // LLM Foundry's ComposerMPTCausalLM trains MPT (model.hpp)
  a.activation = "gelu";
  if (given(ffn, "ffn_act_fn")) a.activation = activation(ffn.at("ffn_act_fn"), "name", "gelu");
}

// The shape of one family's config: the Llama-like ones read llama_like's keys and then their own.
void parse_family(ModelShape& m, const JsonReader& r, Kind kind) {
  ArchShape& a = m.arch;
  switch (kind) {
    case Kind::Llama:
      llama_like(m, r, false);
      a.attn_bias = flag_or(r, "attention_bias", false);
      a.mlp_bias = flag_or(r, "mlp_bias", false);
      return;
    case Kind::Qwen2:
      llama_like(m, r, false);
      a.qkv_bias = true;
      return;
    case Kind::Phi3:
      llama_like(m, r, false);
      return;
    case Kind::Qwen3:  // Qwen3Attention: RMSNorm on each head's query and key
      llama_like(m, r, false);
      a.attn_bias = flag_or(r, "attention_bias", false);
      a.qk_norm = QkNorm::PerHead;
      return;
    case Kind::Olmo2:
      // Olmo2Attention: RMSNorms over the whole query and key projections; the block's two norms
      // follow attention and MLP (post-norm), as many as a pre-norm block's.
      llama_like(m, r, false);
      a.attn_bias = flag_or(r, "attention_bias", false);
      a.qk_norm = QkNorm::Full;
      return;
    case Kind::Starcoder2:
      // Starcoder2Attention / Starcoder2MLP: separate q/k/v/o projections and a plain MLP (c_fc,
      // c_proj), every linear with a bias when use_bias (the head none), LayerNorms with bias,
      // rotary positions; the head tied unless the config says not (Starcoder2Config takes
      // PretrainedConfig's default, tied).
      llama_like(m, r, true);
      m.gated_ffn = false;
      m.layernorm = true;
      a.norm_bias = true;
      m.bias = flag_or(r, "use_bias", true);
      m.dropout =
          any_positive(r, {"attention_dropout", "residual_dropout", "embedding_dropout"}, 0);
      a.activation = activation(r, "hidden_act", "gelu_pytorch_tanh");
      return;
    case Kind::Gemma:
    case Kind::Gemma2:
    case Kind::Gemma3Text:
    case Kind::Gemma3:
      return gemma(m, r, kind);
    case Kind::Mixtral:
      return mixtral(m, r);
    case Kind::Qwen2Moe:
    case Kind::Qwen3Moe:
      return qwen_moe(m, r, kind);
    case Kind::DeepseekV2:
    case Kind::DeepseekV3:
      return deepseek(m, r);
    case Kind::Gpt2:
      return gpt2(m, r);
    case Kind::GptNeox:
      return gpt_neox(m, r);
    case Kind::Falcon:
      return falcon(m, r);
    case Kind::Mpt:
      return mpt(m, r);
  }
}

// The training sequence length of a run that names none (seq_source says which rule gave it): the
// config's pretraining length when it states one (rope_scaling.original_max_position_embeddings,
// the context a long-context model was pretrained at before its RoPE was stretched), else
// kHfDefaultSeqLen; never beyond the position limit the family read into m.seq
// (max_position_embeddings, n_positions, max_seq_len), which is the longest context the positions
// reach, not a length a training step runs at.
void default_sequence(ModelShape& m, const JsonReader& r) {
  const int limit = m.seq;
  std::string limit_text =
      fmt::format("the family's position limit {} (the config states none)", limit);
  for (const char* k : {"max_position_embeddings", "n_positions", "max_seq_len"})
    if (given(r, k)) {
      limit_text = fmt::format("the config's {} {}", k, limit);
      break;
    }
  int pretrained = 0;
  if (given(r, "rope_scaling")) {
    const JsonReader rope = section(r, "rope_scaling");
    if (given(rope, "original_max_position_embeddings"))
      pretrained = rope.at("original_max_position_embeddings").get_int32_at_least(1);
  }
  const int wanted = pretrained > 0 ? pretrained : kHfDefaultSeqLen;
  m.seq = std::min(wanted, limit);
  if (m.seq < wanted)
    m.seq_source = fmt::format("{}, below {}", limit_text,
                               pretrained > 0 ? "its pretraining length"
                                              : fmt::format("the default {}", kHfDefaultSeqLen));
  else if (pretrained > 0)
    m.seq_source = fmt::format(
        "the config's pretraining length, rope_scaling.original_max_position_embeddings ({} is "
        "its longest context)",
        limit_text);
  else
    m.seq_source = fmt::format(
        "the default for Hugging Face configs, {} ({} is its longest context, not a training "
        "length)",
        kHfDefaultSeqLen, limit_text);
}

// The config the decoder is read from: Gemma 3's with Gemma3TextConfig's defaults filled into
// `filled` (a multimodal config's text_config states only what differs from them), from its
// text_config in a multimodal config; every other family's is the config itself.
JsonReader decoder_config(const JsonReader& r, Kind kind, json& filled) {
  if (kind != Kind::Gemma3Text && kind != Kind::Gemma3) return r;
  // transformers' Gemma3TextConfig defaults.
  filled = json{{"vocab_size", 262208},
                {"hidden_size", 2304},
                {"intermediate_size", 9216},
                {"num_hidden_layers", 26},
                {"num_attention_heads", 8},
                {"num_key_value_heads", 4},
                {"head_dim", 256},
                {"max_position_embeddings", 131072},
                {"tie_word_embeddings", true}};
  const JsonReader text = kind == Kind::Gemma3 ? section(r, "text_config") : r;
  for (const auto& [key, value] : text.value().items()) filled[key] = value;
  return JsonReader(filled, text.file(), text.path());
}

}  // namespace

bool is_hf_config(const json& j) {
  if (!j.is_object()) return false;
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads",
                          "intermediate_size", "vocab_size", "max_position_embeddings",
                          "model_type", "architectures", "n_embd", "d_model"})
    if (j.contains(key)) return true;
  return false;
}

std::string supported_hf_model_types() {
  std::string list;
  for (const auto& k : kKnown) list += (list.empty() ? "" : ", ") + std::string(k.model_type);
  return list;
}

ModelShape parse_hf_config(const JsonReader& r) {
  if (!r.value().is_object()) r.fail("must be an object");
  const Known& known = architecture(r);
  ModelShape m;
  m.flash_attention = true;  // every family's training stack here (trains_with_flash_attention)
  m.name = r.has("_name_or_path") && r.value()["_name_or_path"].is_string()
               ? r.at("_name_or_path").get_string()
               : r.file();
  json filled;  // Gemma 3's decoder config with its defaults (outlives `decoder`)
  const JsonReader decoder = decoder_config(r, known.kind, filled);
  parse_family(m, decoder, known.kind);
  default_sequence(m, decoder);
  // Llama-like families are told apart by their model_type (mistral, phi3, mixtral, ...).
  if (m.family == "llama") m.family = std::string(known.model_type);
  m.source = "Hugging Face config " + r.file();
  if (known.kind == Kind::Gemma3)
    m.source += " (its text_config, the decoder; the vision encoder is not modelled)";
  return m;
}

}  // namespace zerosim
