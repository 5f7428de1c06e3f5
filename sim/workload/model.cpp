#include "sim/workload/model.hpp"

#include <fmt/format.h>

#include <limits>

#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"
#include "sim/workload/hf_config.hpp"

namespace zerosim {

bool MoeShape::is_moe_layer(int l) const {
  if (experts == 0 || l < first_dense || l % every != phase) return false;
  for (int d : dense_layers)
    if (d == l) return false;
  return true;
}

std::int64_t read_model_dim(const JsonReader& r, std::int64_t max) {
  const std::int64_t v = r.get_int_at_least(1);
  if (v > max) r.fail(fmt::format("must be at most {} (got {})", max, v));
  return v;
}

namespace {
// The value of r, one of two names: true for `yes`, false for `no`.
bool read_either(const JsonReader& r, const char* yes, const char* no) {
  const std::string v = r.get_string();
  if (v != yes && v != no) r.fail(fmt::format("must be \"{}\" or \"{}\"", yes, no));
  return v == yes;
}
}  // namespace

const char* to_string(QkNorm q) {
  return q == QkNorm::PerHead ? "head" : q == QkNorm::Full ? "full" : "none";
}

bool read_layernorm(const JsonReader& r) { return read_either(r, "layernorm", "rmsnorm"); }
bool read_learned_positions(const JsonReader& r) { return read_either(r, "learned", "rotary"); }

namespace {

std::int64_t get_dim(const JsonReader& r, std::int64_t max) { return read_model_dim(r, max); }

// A workload file's "family": the defaults of its keys.
struct Family {
  const char* name;
  bool gpt_layers;  // LayerNorm, biases, GeLU MLP, learned positions, tied head; else Llama's
  bool dropout, flash_attention;
  bool fused_cross_entropy;
};
constexpr Family kFamilies[] = {
    {"gpt", true, true, false, false},
    // LLM Foundry's MPTConfig: attn_pdrop, resid_pdrop and emb_pdrop 0; its yamls set
    // attn_impl: flash (mpt-model-yamls.md); ComposerMPTCausalLM's loss_fn defaults to
    // "fused_crossentropy" (flash-attn's xentropy kernel).
    {"mpt", true, false, true, true},
    {"llama", false, false, true, false},
};

const Family& read_family(const JsonReader& r) {
  const std::string name = r.string_or("family", "gpt");
  for (const auto& f : kFamilies)
    if (name == f.name) return f;
  std::string list;
  for (const auto& f : kFamilies) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", f.name);
  r.at("family").fail(fmt::format("must be one of {} (got \"{}\")", list, name));
  return kFamilies[0];
}

void apply_family(ModelShape& m, const Family& f) {
  m.family = f.name;
  m.gated_ffn = !f.gpt_layers;
  m.bias = f.gpt_layers;
  m.layernorm = f.gpt_layers;
  m.tied_embeddings = f.gpt_layers;
  m.learned_positions = f.gpt_layers;
  m.dropout = f.dropout;
  m.flash_attention = f.flash_attention;
  m.fused_cross_entropy = f.fused_cross_entropy;
}

// Whether a family's runs fuse the loss by default (to_json writes the key only when it differs).
bool family_fuses_loss(const std::string& family) {
  for (const auto& f : kFamilies)
    if (family == f.name) return f.fused_cross_entropy;
  return false;
}

void validate(const ModelShape& m, const JsonReader& r) {
  // The head width is hidden / heads unless the architecture gives its own (or has MLA's).
  if (m.arch.head_dim == 0 && m.arch.mla.kv_lora_rank == 0 && m.hidden % m.heads != 0)
    r.fail(fmt::format("hidden ({}) must be a multiple of heads ({})", m.hidden, m.heads));
  if (m.heads % m.kv_heads != 0)
    r.fail(fmt::format("heads ({}) must be a multiple of kv heads ({})", m.heads, m.kv_heads));
  const MoeShape& e = m.arch.moe;
  if (e.experts > 0 && (e.top_k < 1 || e.top_k > e.experts))
    r.fail(fmt::format("MoE: experts per token ({}) must be in [1, experts = {}]", e.top_k,
                       e.experts));
  if (e.experts > 0 && e.expert_ffn < 1) r.fail("MoE: the expert width must be at least 1");
  if (e.every < 1 || e.phase < 0 || e.phase >= e.every)
    r.fail(fmt::format("MoE: layer frequency {} and phase {} must satisfy 0 <= phase < frequency",
                       e.every, e.phase));
  if (m.arch.layer_norms != 1 && m.arch.layer_norms != 2 && m.arch.layer_norms != 4)
    r.fail(fmt::format("norms per layer must be 1, 2 or 4 (got {})", m.arch.layer_norms));
  // Widths the architecture multiplies (heads x head width, experts x layers) are bounded like
  // the plain ones, and so is the whole: the 64-bit counts must not overflow and the module list
  // (one module per expert and layer) must stay buildable.
  const MlaShape& a = m.arch.mla;
  const double heads = m.heads, q = heads * static_cast<double>(m.head_dim()),
               kv = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim());
  const double mla_width = heads * (a.qk_nope_dim + a.qk_rope_dim + a.v_dim);
  if (q > kMaxFfn || kv > kMaxFfn || mla_width > kMaxFfn)
    r.fail(fmt::format("attention heads x head width must be at most {}", kMaxFfn));
  if (static_cast<double>(e.experts) * m.layers > kMaxExpertModules)
    r.fail(fmt::format("experts x layers ({} x {}) must be at most {}", e.experts, m.layers,
                       kMaxExpertModules));
  const double h = static_cast<double>(m.hidden);
  const double mlp = static_cast<double>(m.ffn) +
                     static_cast<double>(e.experts) * static_cast<double>(e.expert_ffn) +
                     static_cast<double>(e.shared_ffn);
  const double mla = h * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_dim) +
                     (a.q_lora_rank + a.kv_lora_rank) * mla_width;
  const double estimate = m.layers * (h * (2 * q + 2 * kv) + 3 * h * mlp + mla + h * heads) +
                          2 * static_cast<double>(m.vocab) * h;
  if (estimate > 0x1p62)
    r.fail(fmt::format("the model would have about {:.3g} parameters, more than 2^62", estimate));
}

ModelShape parse_workload(const JsonReader& r) {
  // clang-format off
  r.require_object({"name",       "family",        "layers",          "hidden",    "heads",
                    "kv_heads",   "ffn",           "vocab",           "seq",       "gated_ffn",
                    "bias",       "norm",          "tied_embeddings", "positions", "dropout",
                    "seq_source", "position_rows", "flash_attention", "arch",      "source",
                    "fused_cross_entropy"});
  // clang-format on
  ModelShape m;
  m.name = r.at("name").get_string();
  const Family& family = read_family(r);
  apply_family(m, family);
  m.layers = static_cast<int>(get_dim(r.at("layers"), kMaxLayers));
  m.hidden = get_dim(r.at("hidden"), kMaxHidden);
  m.heads = r.at("heads").get_int32_at_least(1);
  m.kv_heads = r.has("kv_heads") ? r.at("kv_heads").get_int32_at_least(1) : m.heads;
  // GPT's (and MPT's) MLP is 4h wide unless stated; Llama's width is not derivable, so it is
  // required.
  m.ffn = family.gpt_layers && !r.has("ffn") ? 4 * m.hidden : get_dim(r.at("ffn"), kMaxFfn);
  m.vocab = get_dim(r.at("vocab"), kMaxVocab);
  m.seq = r.at("seq").get_int32_at_least(1);
  m.seq_source = r.string_or("seq_source", "");
  m.position_rows = r.has("position_rows") ? r.at("position_rows").get_int32_at_least(1) : 0;
  m.gated_ffn = r.bool_or("gated_ffn", m.gated_ffn);
  m.bias = r.bool_or("bias", m.bias);
  if (r.has("norm")) m.layernorm = read_layernorm(r.at("norm"));
  m.tied_embeddings = r.bool_or("tied_embeddings", m.tied_embeddings);
  if (r.has("positions")) m.learned_positions = read_learned_positions(r.at("positions"));
  m.dropout = r.bool_or("dropout", m.dropout);
  m.flash_attention = r.bool_or("flash_attention", m.flash_attention);
  m.fused_cross_entropy = r.bool_or("fused_cross_entropy", m.fused_cross_entropy);
  if (r.has("arch")) m.arch = read_arch(r.at("arch"));
  m.source = r.string_or("source", r.file());
  return m;
}

}  // namespace

ModelShape parse_model(const json& j, const std::string& file) {
  JsonReader r(j, file);
  ModelShape m = is_hf_config(j) ? parse_hf_config(r) : parse_workload(r);
  validate(m, r);
  return m;
}

ModelShape with_sequence_length(ModelShape m, int seq) {
  if (m.learned_positions && m.position_rows == 0 && m.seq != seq) {
    m.seq = seq;
    m.seq_source.clear();
  }
  return m;
}

ModelShape load_model(const std::string& name_or_file, FileCache* files) {
  auto path = resolve_data_file("workloads", name_or_file, "--model", files);
  if (files)
    if (auto m = files->parsed<ModelShape>(path, [&](const std::string& text) {
          return parse_model(parse_json_text(text, path), path);
        }))
      return *m;
  return parse_model(load_json_file(path), path);
}

json to_json(const ModelShape& m) {
  json j = json::object();
  j.emplace("name", m.name);
  j.emplace("family", m.family);
  j.emplace("layers", m.layers);
  j.emplace("hidden", m.hidden);
  j.emplace("heads", m.heads);
  j.emplace("kv_heads", m.kv_heads);
  j.emplace("ffn", m.ffn);
  j.emplace("vocab", m.vocab);
  j.emplace("seq", m.seq);
  if (!m.seq_source.empty()) j.emplace("seq_source", m.seq_source);
  if (m.position_rows > 0) j.emplace("position_rows", m.position_rows);
  j.emplace("gated_ffn", m.gated_ffn);
  j.emplace("bias", m.bias);
  j.emplace("norm", m.layernorm ? "layernorm" : "rmsnorm");
  j.emplace("tied_embeddings", m.tied_embeddings);
  j.emplace("positions", m.learned_positions ? "learned" : "rotary");
  j.emplace("dropout", m.dropout);
  j.emplace("flash_attention", m.flash_attention);
  if (m.fused_cross_entropy != family_fuses_loss(m.family))
    j.emplace("fused_cross_entropy", m.fused_cross_entropy);
  if (m.arch != ArchShape{}) j.emplace("arch", to_json(m.arch));
  j.emplace("source", m.source);
  return j;
}

json to_json(const ArchShape& a) {
  json j = json::object();
  j.emplace("activation", a.activation);
  j.emplace("head_dim", a.head_dim);
  j.emplace("attn_bias", a.attn_bias);
  j.emplace("qkv_bias", a.qkv_bias);
  j.emplace("mlp_bias", a.mlp_bias);
  j.emplace("parallel_attn", a.parallel_attn);
  j.emplace("layer_norms", a.layer_norms);
  j.emplace("norm_bias", a.norm_bias);
  j.emplace("qk_norm", to_string(a.qk_norm));
  if (a.mla != MlaShape{}) {
    json mla = json::object();
    mla.emplace("q_lora_rank", a.mla.q_lora_rank);
    mla.emplace("kv_lora_rank", a.mla.kv_lora_rank);
    mla.emplace("qk_nope_dim", a.mla.qk_nope_dim);
    mla.emplace("qk_rope_dim", a.mla.qk_rope_dim);
    mla.emplace("v_dim", a.mla.v_dim);
    j.emplace("mla", std::move(mla));
  }
  if (a.moe != MoeShape{}) {
    json moe = json::object();
    moe.emplace("experts", a.moe.experts);
    moe.emplace("top_k", a.moe.top_k);
    moe.emplace("expert_ffn", a.moe.expert_ffn);
    moe.emplace("shared_ffn", a.moe.shared_ffn);
    moe.emplace("shared_gate", a.moe.shared_gate);
    moe.emplace("router_bias", a.moe.router_bias);
    moe.emplace("first_dense", a.moe.first_dense);
    moe.emplace("every", a.moe.every);
    moe.emplace("phase", a.moe.phase);
    moe.emplace("dense_layers", a.moe.dense_layers);
    j.emplace("moe", std::move(moe));
  }
  return j;
}

ArchShape read_arch(const JsonReader& r) {
  r.require_object({"activation", "head_dim", "attn_bias", "qkv_bias", "mlp_bias", "parallel_attn",
                    "layer_norms", "norm_bias", "qk_norm", "mla", "moe"});
  ArchShape a;
  a.activation = r.at("activation").get_string();
  a.head_dim = r.at("head_dim").get_int_at_least(0);
  if (a.head_dim > kMaxHidden) r.at("head_dim").fail(fmt::format("must be at most {}", kMaxHidden));
  a.attn_bias = r.at("attn_bias").get_bool();
  a.qkv_bias = r.at("qkv_bias").get_bool();
  a.mlp_bias = r.at("mlp_bias").get_bool();
  a.parallel_attn = r.at("parallel_attn").get_bool();
  a.layer_norms = r.at("layer_norms").get_int32_at_least(1);
  if (a.layer_norms != 1 && a.layer_norms != 2 && a.layer_norms != 4)
    r.at("layer_norms").fail("must be 1, 2 or 4");
  a.norm_bias = r.bool_or("norm_bias", true);
  if (r.has("qk_norm")) {
    const std::string q = r.at("qk_norm").get_string();
    for (QkNorm v : {QkNorm::None, QkNorm::PerHead, QkNorm::Full})
      if (q == to_string(v)) a.qk_norm = v;
    if (q != to_string(a.qk_norm)) r.at("qk_norm").fail("must be \"none\", \"head\" or \"full\"");
  }
  if (r.has("mla")) {
    const auto q = r.at("mla");
    q.require_object({"q_lora_rank", "kv_lora_rank", "qk_nope_dim", "qk_rope_dim", "v_dim"});
    auto rank = [&](const char* key, std::int64_t min) {
      const auto v = q.at(key).get_int_at_least(min);
      if (v > kMaxHidden) q.at(key).fail(fmt::format("must be at most {}", kMaxHidden));
      return static_cast<int>(v);
    };
    a.mla.q_lora_rank = rank("q_lora_rank", 0);
    a.mla.kv_lora_rank = rank("kv_lora_rank", 1);
    a.mla.qk_nope_dim = rank("qk_nope_dim", 1);
    a.mla.qk_rope_dim = rank("qk_rope_dim", 1);
    a.mla.v_dim = rank("v_dim", 1);
  }
  if (r.has("moe")) {
    const auto e = r.at("moe");
    e.require_object({"experts", "top_k", "expert_ffn", "shared_ffn", "shared_gate", "router_bias",
                      "first_dense", "every", "phase", "dense_layers"});
    a.moe.experts = static_cast<int>(read_model_dim(e.at("experts"), kMaxExperts));
    a.moe.top_k = e.at("top_k").get_int32_at_least(1);
    a.moe.expert_ffn = read_model_dim(e.at("expert_ffn"), kMaxFfn);
    a.moe.shared_ffn = e.at("shared_ffn").get_int_at_least(0);
    if (a.moe.shared_ffn > kMaxFfn)
      e.at("shared_ffn").fail(fmt::format("must be at most {}", kMaxFfn));
    a.moe.shared_gate = e.at("shared_gate").get_bool();
    a.moe.router_bias = e.at("router_bias").get_bool();
    a.moe.first_dense = e.at("first_dense").get_int32_at_least(0);
    a.moe.every = static_cast<int>(read_model_dim(e.at("every"), kMaxLayers));
    a.moe.phase = e.at("phase").get_int32_at_least(0);
    const auto d = e.at("dense_layers");
    for (std::size_t i = 0; i < d.array_size(); ++i)
      a.moe.dense_layers.push_back(d.at(i).get_int32_at_least(0));
  }
  return a;
}

}  // namespace zerosim
