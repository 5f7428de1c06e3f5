#include "sim/workload/transformer.hpp"

namespace zerosim {

std::int64_t Module::param_elems() const {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.elems;
  return n;
}

double Module::forward_flops() const {
  double f = attention_flops;
  for (const auto& g : gemms) f += g.flops;
  return f;
}

namespace {
void add_norm(std::vector<ParamTensor>& v, const ModelShape& m, const std::string& name) {
  v.push_back({name + ".weight", m.hidden, true});
  if (m.layernorm) v.push_back({name + ".bias", m.hidden, true});
}
void add_linear(std::vector<ParamTensor>& v, const ModelShape& m, const std::string& name,
                std::int64_t in, std::int64_t out) {
  v.push_back({name + ".weight", in * out, false});
  if (m.bias) v.push_back({name + ".bias", out, true});
}
}  // namespace

std::vector<ParamTensor> layer_params(const ModelShape& m) {
  const std::int64_t h = m.hidden, f = m.ffn;
  std::vector<ParamTensor> v;
  add_norm(v, m, "input_norm");
  add_linear(v, m, "qkv", h, h + 2 * m.kv_dim());
  add_linear(v, m, "attn_out", h, h);
  add_norm(v, m, "post_attn_norm");
  if (m.gated_ffn) {
    add_linear(v, m, "gate", h, f);
    add_linear(v, m, "up", h, f);
  } else {
    add_linear(v, m, "fc1", h, f);
  }
  add_linear(v, m, "fc2", f, h);
  return v;
}

std::int64_t layer_param_count(const ModelShape& m) {
  std::int64_t n = 0;
  for (const auto& p : layer_params(m)) n += p.elems;
  return n;
}

std::vector<Module> build_modules(const ModelShape& m, std::int64_t tokens, int seq) {
  const double T = static_cast<double>(tokens), h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn), V = static_cast<double>(m.vocab);
  std::vector<Module> mods;

  Module embed{"embed", ModuleKind::Embedding, {}, 0, {}, 0, false};
  embed.params.push_back({"word_embeddings", m.vocab * m.hidden, false});
  if (m.learned_positions)
    embed.params.push_back({"position_embeddings", std::int64_t{seq} * m.hidden, false});
  embed.gather_elems = embed.param_elems();
  mods.push_back(embed);

  // DeepSpeed fetches weights per submodule (its pre-forward hook gathers a leaf module's
  // parameters), so a layer is four modules in forward order: the attention input projection, the
  // attention core with its output projection, and the two MLP projections. Each norm rides with
  // the projection that follows it (norms are tiny and below DeepSpeed's persistence threshold).
  const double kv = static_cast<double>(m.kv_dim());
  for (int l = 0; l < m.layers; ++l) {
    const std::string prefix = "layer" + std::to_string(l) + ".";
    auto sub = [&](const std::string& name) {
      Module mod{prefix + name, ModuleKind::Layer, {}, 0, {}, 0, true};
      mod.layer = l;
      return mod;
    };
    Module qkv = sub("qkv");
    add_norm(qkv.params, m, "input_norm");
    add_linear(qkv.params, m, "qkv", m.hidden, m.hidden + 2 * m.kv_dim());
    qkv.gemms.push_back({"qkv", 2 * T * h * (h + 2 * kv)});
    Module attn = sub("attn");
    add_linear(attn.params, m, "attn_out", m.hidden, m.hidden);
    attn.attention_flops = 4 * T * seq * h;  // QK^T and attention x V, as Megatron-LM counts them
    attn.gemms.push_back({"attn_out", 2 * T * h * h});
    Module up = sub(m.gated_ffn ? "gate_up" : "fc1");
    add_norm(up.params, m, "post_attn_norm");
    if (m.gated_ffn) {
      add_linear(up.params, m, "gate", m.hidden, m.ffn);
      add_linear(up.params, m, "up", m.hidden, m.ffn);
      up.gemms.push_back({"gate", 2 * T * h * f});
      up.gemms.push_back({"up", 2 * T * h * f});
    } else {
      add_linear(up.params, m, "fc1", m.hidden, m.ffn);
      up.gemms.push_back({"fc1", 2 * T * h * f});
    }
    Module down = sub("fc2");
    add_linear(down.params, m, "fc2", m.ffn, m.hidden);
    down.gemms.push_back({"fc2", 2 * T * h * f});
    for (Module* mod : {&qkv, &attn, &up, &down}) {
      mod->gather_elems = mod->param_elems();
      mods.push_back(std::move(*mod));
    }
  }

  Module head{"head", ModuleKind::Head, {}, 0, {}, 0, false};
  add_norm(head.params, m, "final_norm");
  head.gather_elems = head.param_elems() + m.vocab * m.hidden;
  if (!m.tied_embeddings) head.params.push_back({"lm_head", m.vocab * m.hidden, false});
  head.gemms.push_back({"logits", 2 * T * h * V});
  mods.push_back(head);
  return mods;
}

std::int64_t total_param_count(const ModelShape& m) {
  std::int64_t n = 0;
  for (const auto& mod : build_modules(m, 1, m.seq)) n += mod.param_elems();
  return n;
}

double model_forward_flops(const ModelShape& m, std::int64_t tokens, int seq) {
  double f = 0;
  for (const auto& mod : build_modules(m, tokens, seq)) f += mod.forward_flops();
  return f;
}

double layer_activation_bytes(const ModelShape& m, std::int64_t tokens, int seq) {
  const double T = static_cast<double>(tokens), h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn), kv = static_cast<double>(m.kv_dim());
  const double a = m.heads, drop = m.dropout ? 1.0 : 0.0;
  // Two norm inputs; attention: QKV input, Q, K, V, softmax output (+ dropout mask and output),
  // output-projection input, dropout mask; MLP: first GEMM input, then the intermediate tensors.
  double norms = 2 * 2 * T * h;
  double attn = 2 * T * h + 2 * T * h + 4 * T * kv + 2 * a * seq * T + drop * 3 * a * seq * T +
                2 * T * h + drop * T * h;
  double mlp = m.gated_ffn ? 2 * T * h + 8 * T * f : 2 * T * h + 4 * T * f + drop * T * h;
  return norms + attn + mlp;
}

double layer_checkpoint_bytes(const ModelShape& m, std::int64_t tokens) {
  return 2.0 * static_cast<double>(tokens) * static_cast<double>(m.hidden);
}

double head_activation_bytes(const ModelShape& m, std::int64_t tokens) {
  const double T = static_cast<double>(tokens);
  return 2 * T * static_cast<double>(m.hidden) + 6 * T * static_cast<double>(m.vocab);
}

double activation_bytes(const ModelShape& m, std::int64_t tokens, int seq, bool checkpointing) {
  const double full = layer_activation_bytes(m, tokens, seq);
  const double per_layer = checkpointing ? layer_checkpoint_bytes(m, tokens) : full;
  return m.layers * per_layer + (checkpointing ? full : 0) + head_activation_bytes(m, tokens);
}

double megatron_step_flops(const ModelShape& m, double sequences, int seq, bool checkpointing) {
  const double s = seq, l = m.layers, h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab);
  const double factor = checkpointing ? 96 : 72;
  return factor * sequences * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace zerosim
