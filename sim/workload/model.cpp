#include "sim/workload/model.hpp"

#include <fmt/format.h>

#include <limits>

#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"

namespace zerosim {

namespace {

// Shape limits far above any real model keep the 64-bit parameter and FLOP counts from overflowing
// (layers x 12 h^2 stays below 2^62): a larger value is a typo, not a model.
constexpr std::int64_t kMaxLayers = 1 << 16, kMaxHidden = 1 << 20, kMaxFfn = 1 << 22,
                       kMaxVocab = 1 << 24;

std::int64_t get_dim(const JsonReader& r, std::int64_t max) {
  const std::int64_t v = r.get_int_at_least(1);
  if (v > max) r.fail(fmt::format("must be at most {} (got {})", max, v));
  return v;
}

void apply_family(ModelShape& m) {
  const bool gpt = m.family == "gpt";
  m.gated_ffn = !gpt;
  m.bias = gpt;
  m.layernorm = gpt;
  m.tied_embeddings = gpt;
  m.learned_positions = gpt;
  m.dropout = gpt;
}

void validate(const ModelShape& m, const JsonReader& r) {
  if (m.hidden % m.heads != 0)
    r.fail(fmt::format("hidden ({}) must be a multiple of heads ({})", m.hidden, m.heads));
  if (m.heads % m.kv_heads != 0)
    r.fail(fmt::format("heads ({}) must be a multiple of kv heads ({})", m.heads, m.kv_heads));
}

ModelShape parse_workload(const JsonReader& r) {
  r.require_object({"name", "family", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab",
                    "seq", "gated_ffn", "bias", "norm", "tied_embeddings", "positions", "dropout",
                    "source"});
  ModelShape m;
  m.name = r.at("name").get_string();
  m.family = r.string_or("family", "gpt");
  if (m.family != "gpt" && m.family != "llama")
    r.at("family").fail(fmt::format("must be \"gpt\" or \"llama\" (got \"{}\")", m.family));
  apply_family(m);
  m.layers = static_cast<int>(get_dim(r.at("layers"), kMaxLayers));
  m.hidden = get_dim(r.at("hidden"), kMaxHidden);
  m.heads = r.at("heads").get_int32_at_least(1);
  m.kv_heads = r.has("kv_heads") ? r.at("kv_heads").get_int32_at_least(1) : m.heads;
  // GPT's MLP is 4h wide unless stated; Llama's width is not derivable, so it is required.
  m.ffn = m.family == "gpt" && !r.has("ffn") ? 4 * m.hidden : get_dim(r.at("ffn"), kMaxFfn);
  m.vocab = get_dim(r.at("vocab"), kMaxVocab);
  m.seq = r.at("seq").get_int32_at_least(1);
  m.gated_ffn = r.bool_or("gated_ffn", m.gated_ffn);
  m.bias = r.bool_or("bias", m.bias);
  if (r.has("norm")) {
    auto n = r.at("norm").get_string();
    if (n != "layernorm" && n != "rmsnorm")
      r.at("norm").fail("must be \"layernorm\" or \"rmsnorm\"");
    m.layernorm = n == "layernorm";
  }
  m.tied_embeddings = r.bool_or("tied_embeddings", m.tied_embeddings);
  if (r.has("positions")) {
    auto p = r.at("positions").get_string();
    if (p != "learned" && p != "rotary")
      r.at("positions").fail("must be \"learned\" or \"rotary\"");
    m.learned_positions = p == "learned";
  }
  m.dropout = r.bool_or("dropout", m.dropout);
  m.source = r.string_or("source", r.file());
  validate(m, r);
  return m;
}

// Hugging Face config.json of a Llama-style model (Llama, Mistral, Qwen2, ...): gated SiLU MLP,
// RMSNorm, rotary positions, no biases. Keys other than the ones read here are ignored, as HF
// itself does.
ModelShape parse_hf_config(const JsonReader& r) {
  if (!r.value().is_object()) r.fail("must be an object");
  ModelShape m;
  m.family = "llama";
  apply_family(m);
  m.name = r.has("_name_or_path") && r.value()["_name_or_path"].is_string()
               ? r.at("_name_or_path").get_string()
               : r.file();
  m.hidden = get_dim(r.at("hidden_size"), kMaxHidden);
  m.layers = static_cast<int>(get_dim(r.at("num_hidden_layers"), kMaxLayers));
  m.heads = r.at("num_attention_heads").get_int32_at_least(1);
  // HF semantics: a config without num_key_value_heads has multi-head attention.
  m.kv_heads =
      r.has("num_key_value_heads") ? r.at("num_key_value_heads").get_int32_at_least(1) : m.heads;
  m.ffn = get_dim(r.at("intermediate_size"), kMaxFfn);
  m.vocab = get_dim(r.at("vocab_size"), kMaxVocab);
  m.seq = r.at("max_position_embeddings").get_int32_at_least(1);
  m.tied_embeddings = r.has("tie_word_embeddings") && r.at("tie_word_embeddings").get_bool();
  m.bias = r.has("attention_bias") && r.at("attention_bias").get_bool();
  m.source = "Hugging Face config " + r.file();
  validate(m, r);
  return m;
}

// A Hugging Face config is told by any key of its format, not only hidden_size: one without
// hidden_size is then reported as missing it, not as a workload file with unknown keys.
bool is_hf_config(const json& j) {
  if (!j.is_object()) return false;
  for (const char* key :
       {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "vocab_size", "max_position_embeddings", "model_type", "architectures"})
    if (j.contains(key)) return true;
  return false;
}

}  // namespace

ModelShape parse_model(const json& j, const std::string& file) {
  JsonReader r(j, file);
  if (is_hf_config(j)) return parse_hf_config(r);
  return parse_workload(r);
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
  j.emplace("gated_ffn", m.gated_ffn);
  j.emplace("bias", m.bias);
  j.emplace("norm", m.layernorm ? "layernorm" : "rmsnorm");
  j.emplace("tied_embeddings", m.tied_embeddings);
  j.emplace("positions", m.learned_positions ? "learned" : "rotary");
  j.emplace("dropout", m.dropout);
  j.emplace("source", m.source);
  return j;
}

}  // namespace zerosim
