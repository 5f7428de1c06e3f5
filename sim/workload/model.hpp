// Model: the shape of a decoder-only transformer (GPT or Llama style) and where it comes from: a
// workload preset (workloads/<name>.json), a workload file with the same keys, or a Hugging Face
// config.json (recognised by its "hidden_size" key). Derived quantities (parameters, FLOPs,
// activation bytes) live in transformer.hpp.
#pragma once
#include <compare>
#include <cstdint>
#include <string>

#include "sim/core/json_io.hpp"

namespace zerosim {

struct ModelShape {
  std::string name;
  std::string family = "gpt";  // "gpt" (LayerNorm, biases, GeLU MLP, learned positions, tied
                               // embeddings, dropout) or "llama" (RMSNorm, no biases, gated SiLU
                               // MLP, rotary positions, untied head, no dropout)
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; == heads for multi-head attention
  std::int64_t ffn = 0;
  std::int64_t vocab = 0;
  int seq = 0;  // default sequence length
  bool gated_ffn = false;
  bool bias = true;
  bool layernorm = true;  // false: RMSNorm (weight only)
  bool tied_embeddings = true;
  bool learned_positions = true;
  bool dropout = true;
  std::string source;  // where the shape comes from

  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t kv_dim() const { return head_dim() * kv_heads; }
  auto operator<=>(const ModelShape&) const = default;  // cache keys (ModuleCache)
};

// Parses a workload JSON (strict keys; see workloads/*.json) or, when the object has "hidden_size",
// a Hugging Face config.json (unknown HF keys are ignored; missing required ones are InputError).
ModelShape parse_model(const json& j, const std::string& file);
// --model NAME|FILE: a preset name under workloads/ or a path. `files`: parsed once per distinct
// file content there; null: read and parsed afresh.
ModelShape load_model(const std::string& name_or_file, FileCache* files = nullptr);
json to_json(const ModelShape& m);

}  // namespace zerosim
