#include "sim/workload/transformer.hpp"

#include <algorithm>
#include <map>

namespace zerosim {

const char* to_string(AttentionImpl a) { return a == AttentionImpl::Flash ? "flash" : "eager"; }

bool trains_with_flash_attention(const ModelShape& m) { return m.flash_attention; }

bool unpadded_flash_attention(const ModelShape& m) {
  return m.family == "mpt" && m.flash_attention;
}

double attention_backward_factor(AttentionImpl a) { return a == AttentionImpl::Flash ? 2.5 : 2.0; }

std::int64_t Module::param_elems() const {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.elems;
  return n;
}

Gemm linear_gemm(std::string name, double tokens, double in, double out) {
  return {std::move(name), 2 * tokens * in * out, tokens, out, in};
}

const char* to_string(MemoryKernel k) {
  static constexpr std::array<const char*, kMemoryKernelCount> kNames = {
      "norm",    "activation", "residual",  "bias",   "rotary",
      "dropout", "loss",       "embedding", "padding"};
  return kNames[static_cast<std::size_t>(k)];
}

double Module::forward_flops() const {
  double f = attention_flops;
  for (const auto& g : gemms) f += g.flops;
  return f;
}

namespace {
void add_norm(std::vector<ParamTensor>& v, const ModelShape& m, const std::string& name,
              std::int64_t width = 0) {
  v.push_back({name + ".weight", width > 0 ? width : m.hidden, true, 0});
  if (m.layernorm && m.arch.norm_bias)
    v.push_back({name + ".bias", width > 0 ? width : m.hidden, true, 0});
}
// A linear layer; it has a bias when the model's linears all have one or `bias` says this one has.
void add_linear(std::vector<ParamTensor>& v, const ModelShape& m, const std::string& name,
                std::int64_t in, std::int64_t out, bool bias = false) {
  v.push_back({name + ".weight", in * out, false, std::max(in, out)});
  if (m.bias || bias) v.push_back({name + ".bias", out, true, 0});
}

// A bias's gradient: the output gradient (T x width) summed over the tokens, in backward (the
// forward's bias add rides in the GEMM's epilogue).
void add_bias_grad(Module& mod, double T, double width) {
  mod.memory.add(MemoryKernel::Bias, 0, 2 * T * width, 0, 1);
}
// `count` norms over the hidden width: LayerNorm / RMSNorm read the input and write the output
// (4 bytes per element, BF16); backward reads the input and the gradient and writes the input's
// gradient (6), then a second kernel reads the input and the gradient again to reduce the weight
// (and bias) gradients over the tokens (4): PyTorch's layer_norm_backward (ATen
// native/cuda/layer_norm_kernel.cu: the dX kernel, then GammaBetaBackwardCUDAKernel).
void add_norms(Module& mod, const ModelShape& m, double T, int count) {
  const double h = static_cast<double>(m.hidden);
  mod.memory.add(MemoryKernel::Norm, count * 4 * T * h, count * 10 * T * h, count, 2 * count);
}
// A branch's residual add (read two, write one T x h tensor) and, when the model trains with
// dropout, the dropout before it (read, write, and a one-byte mask; backward reads the gradient and
// the mask). The add's backward is the sum of the two gradient paths (read two, write one).
void add_residual(Module& mod, const ModelShape& m, double T) {
  const double h = static_cast<double>(m.hidden);
  mod.memory.add(MemoryKernel::Residual, 6 * T * h, 6 * T * h, 1, 1);
  if (m.dropout) mod.memory.add(MemoryKernel::Dropout, 5 * T * h, 5 * T * h, 1, 1);
}

// One MLP of width f (a dense layer's, an expert's or the shared expert's): its tensors to `up`
// (gate and up, or fc1) and `down` (fc2), and its GEMMs for `tokens` tokens.
void add_mlp(Module& up, Module& down, const ModelShape& m, const std::string& prefix,
             std::int64_t f, double tokens) {
  const double h = static_cast<double>(m.hidden), F = static_cast<double>(f);
  const bool b = m.arch.mlp_bias;
  if (m.gated_ffn) {
    add_linear(up.params, m, prefix + "gate", m.hidden, f, b);
    add_linear(up.params, m, prefix + "up", m.hidden, f, b);
    up.gemms.push_back(linear_gemm(prefix + "gate", tokens, h, F));
    up.gemms.push_back(linear_gemm(prefix + "up", tokens, h, F));
  } else {
    add_linear(up.params, m, prefix + "fc1", m.hidden, f, b);
    up.gemms.push_back(linear_gemm(prefix + "fc1", tokens, h, F));
  }
  add_linear(down.params, m, prefix + "fc2", f, m.hidden, b);
  down.gemms.push_back(linear_gemm(prefix + "fc2", tokens, F, h));
  // The activation over the MLP's width: GELU reads and writes T x F (backward reads its input
  // and the gradient, writes the input's gradient); gated: SiLU of the gate, then its product
  // with the up projection (two kernels each way).
  if (m.gated_ffn)
    up.memory.add(MemoryKernel::Activation, 10 * tokens * F, 16 * tokens * F, 2, 2);
  else
    up.memory.add(MemoryKernel::Activation, 4 * tokens * F, 6 * tokens * F, 1, 1);
  if (m.bias || b) {
    add_bias_grad(up, tokens, m.gated_ffn ? 2 * F : F);
    add_bias_grad(down, tokens, h);
  }
}

// The attention input projections: one fused q/k/v projection, or MLA's low-rank ones.
void add_qkv(Module& qkv, const ModelShape& m, double T) {
  const double h = static_cast<double>(m.hidden);
  const MlaShape& a = m.arch.mla;
  const bool bias = m.arch.attn_bias;
  if (a.kv_lora_rank == 0) {
    const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
    add_linear(qkv.params, m, "qkv", m.hidden, m.q_dim() + 2 * m.kv_dim(), bias || m.arch.qkv_bias);
    qkv.gemms.push_back(linear_gemm("qkv", T, h, q + 2 * kv));
    if (m.bias || bias || m.arch.qkv_bias) add_bias_grad(qkv, T, q + 2 * kv);
    if (m.arch.qk_norm != QkNorm::None) {
      const bool per_head = m.arch.qk_norm == QkNorm::PerHead;
      add_norm(qkv.params, m, "q_norm", per_head ? m.head_dim() : m.q_dim());
      add_norm(qkv.params, m, "k_norm", per_head ? m.head_dim() : m.kv_dim());
      // The two norms over the queries and keys, as add_norms prices one over T x h.
      qkv.memory.add(MemoryKernel::Norm, 4 * T * (q + kv), 10 * T * (q + kv), 2, 4);
    }
    return;
  }
  const std::int64_t H = m.heads, qk = a.qk_nope_dim + a.qk_rope_dim;
  auto linear = [&](const char* name, std::int64_t in, std::int64_t out, bool b) {
    add_linear(qkv.params, m, name, in, out, b);
    qkv.gemms.push_back(linear_gemm(name, T, static_cast<double>(in), static_cast<double>(out)));
  };
  if (a.q_lora_rank > 0) {
    linear("q_a", m.hidden, a.q_lora_rank, bias);
    add_norm(qkv.params, m, "q_a_norm", a.q_lora_rank);
    linear("q_b", a.q_lora_rank, H * qk, false);
  } else {
    linear("q", m.hidden, H * qk, bias);
  }
  // The key/value latent and the rotary key shared by all heads, then each head's key and value.
  linear("kv_a", m.hidden, a.kv_lora_rank + a.qk_rope_dim, bias);
  add_norm(qkv.params, m, "kv_a_norm", a.kv_lora_rank);
  linear("kv_b", a.kv_lora_rank, H * (a.qk_nope_dim + a.v_dim), false);
}

// Width of the attention output (the output projection's input): heads x value width.
std::int64_t attn_out_width(const ModelShape& m) {
  return m.arch.mla.kv_lora_rank > 0 ? std::int64_t{m.heads} * m.arch.mla.v_dim : m.q_dim();
}

// Layer l's modules, appended in forward order. DeepSpeed fetches weights per submodule (its
// pre-forward hook gathers a leaf module's parameters), so a dense layer is four modules: the
// attention input projection, the attention core with its output projection, and the two MLP
// projections. Each norm rides with the projection next to it (norms are tiny and below
// DeepSpeed's persistence threshold). An MoE layer's MLP is the router (with the shared expert)
// and one module per routed expert: every expert is gathered, while its GEMMs see the top_k / E
// share of the tokens that routing sends it on average.
// A submodule of layer l, recomputed under checkpointing.
Module layer_module(int l, const std::string& name) {
  Module mod{
      "layer" + std::to_string(l) + "." + name, ModuleKind::Layer, {}, 0, {}, 0, true, -1, 0, {}};
  mod.layer = l;
  return mod;
}
// Appends a finished submodule: it gathers the weights it owns.
void push_module(std::vector<Module>& mods, Module& mod) {
  mod.gather_elems = mod.param_elems();
  mods.push_back(std::move(mod));
}

// LLM Foundry's flash_attn_fn around flash_attn_varlen_func (BF16, q and kv the query and key
// widths; flash-attn flash_attn/bert_padding.py): forward, unpad_input gathers each of Q, K and V
// (IndexFirstAxis.forward: torch.gather, read + write 4 bytes per element) and pad_input writes a
// zeroed output and index_puts the result into it (IndexPutFirstAxis.forward: 6); backward, the
// output gradient gathered back (IndexPutFirstAxis.backward: 4), each of dQ, dK, dV scattered
// into a zeroed padded tensor (IndexFirstAxis.backward: zeros + scatter_, 6), and the three joined
// by the fused QKV split's backward (autograd's SplitBackward: cat, 4).
void add_padding_copies(Module& attn, const ModelShape& m, double T) {
  const double q = static_cast<double>(m.q_dim()), qkv = q + 2.0 * static_cast<double>(m.kv_dim());
  attn.memory.add(MemoryKernel::Padding, 4 * T * qkv + 6 * T * q, 4 * T * q + 10 * T * qkv,
                  kPaddingForwardKernels, kPaddingBackwardKernels);
}

// The attention half of layer l: QKV (with its norm, rotary) and the attention output.
void append_attention(std::vector<Module>& mods, const ModelShape& m, int l, double T, int seq) {
  const double h = static_cast<double>(m.hidden);
  const int norms = m.arch.layer_norms;
  Module qkv = layer_module(l, "qkv");
  add_norm(qkv.params, m, "input_norm");
  add_qkv(qkv, m, T);
  Module attn = layer_module(l, "attn");
  const std::int64_t out_in = attn_out_width(m);
  add_linear(attn.params, m, "attn_out", out_in, m.hidden, m.arch.attn_bias);
  if (m.arch.mla.kv_lora_rank > 0) {
    const MlaShape& a = m.arch.mla;
    attn.attention_flops = 2 * T * seq * static_cast<double>(m.heads) *
                           static_cast<double>(a.qk_nope_dim + a.qk_rope_dim + a.v_dim);
  } else {
    // QK^T and attention x V, as Megatron-LM counts them (the full s x s square).
    attn.attention_flops = 4 * T * seq * static_cast<double>(m.q_dim());
  }
  attn.attention_seq = seq;
  attn.gemms.push_back(linear_gemm("attn_out", T, static_cast<double>(out_in), h));
  if (m.bias || m.arch.attn_bias) add_bias_grad(attn, T, h);
  add_norms(qkv, m, T, 1);
  if (!m.learned_positions) {
    // Rotary embedding of the queries and keys: read and written each way, one kernel each.
    const double rq = static_cast<double>(m.q_dim() + m.kv_dim());
    qkv.memory.add(MemoryKernel::Rotary, 4 * T * rq, 4 * T * rq, 2, 2);
  }
  if (unpadded_flash_attention(m) && m.arch.mla.kv_lora_rank == 0) add_padding_copies(attn, m, T);
  // The attention branch's dropout and residual add; the MLP's in the MLP's modules.
  add_residual(attn, m, T);
  if (norms == 4) add_norms(attn, m, T, 1);
  if (norms == 4) add_norm(attn.params, m, "post_attn_norm");
  push_module(mods, qkv);
  push_module(mods, attn);
}

// A mixture-of-experts MLP: the router (with any shared expert) and one module per expert, each
// on the top_k / experts share of the tokens.
void append_moe_mlp(std::vector<Module>& mods, const ModelShape& m, int l, double T,
                    const char* pre_mlp_norm) {
  const double h = static_cast<double>(m.hidden);
  const int norms = m.arch.layer_norms;
  const MoeShape& e = m.arch.moe;
  Module router = layer_module(l, "router");
  if (pre_mlp_norm != nullptr) add_norm(router.params, m, pre_mlp_norm);
  add_linear(router.params, m, "router", m.hidden, e.experts);
  router.gemms.push_back(linear_gemm("router", T, h, e.experts));
  if (pre_mlp_norm != nullptr) add_norms(router, m, T, 1);
  if (norms == 4) add_norms(router, m, T, 1);
  if (!m.arch.parallel_attn) add_residual(router, m, T);
  if (e.router_bias) router.params.push_back({"router.score_bias", e.experts, true, 0});
  if (e.shared_ffn > 0) {
    add_mlp(router, router, m, "shared.", e.shared_ffn, T);
    if (e.shared_gate) {
      add_linear(router.params, m, "shared.gate_proj", m.hidden, 1);
      router.gemms.push_back(linear_gemm("shared.gate_proj", T, h, 1));
    }
  }
  if (norms == 4) add_norm(router.params, m, "post_ffn_norm");
  push_module(mods, router);
  const double routed = T * e.top_k / e.experts;  // tokens per expert, on average
  for (int x = 0; x < e.experts; ++x) {
    Module expert = layer_module(l, "expert" + std::to_string(x));
    add_mlp(expert, expert, m, "", e.expert_ffn, routed);
    push_module(mods, expert);
  }
}

void append_layer(std::vector<Module>& mods, const ModelShape& m, int l, double T, int seq) {
  const int norms = m.arch.layer_norms;
  append_attention(mods, m, l, T, seq);
  const char* pre_mlp_norm = norms == 4 ? "pre_ffn_norm" : norms == 2 ? "post_attn_norm" : nullptr;
  if (m.arch.moe.is_moe_layer(l)) {
    append_moe_mlp(mods, m, l, T, pre_mlp_norm);
    return;
  }
  Module up = layer_module(l, m.gated_ffn ? "gate_up" : "fc1");
  Module down = layer_module(l, "fc2");
  if (pre_mlp_norm != nullptr) add_norm(up.params, m, pre_mlp_norm);
  add_mlp(up, down, m, "", m.ffn, T);
  if (norms == 4) add_norm(down.params, m, "post_ffn_norm");
  if (pre_mlp_norm != nullptr) add_norms(up, m, T, 1);
  if (norms == 4) add_norms(down, m, T, 1);
  if (!m.arch.parallel_attn) add_residual(down, m, T);
  push_module(mods, up);
  push_module(mods, down);
}
}  // namespace

std::vector<ParamTensor> layer_params(const ModelShape& m) {
  std::vector<Module> mods;
  append_layer(mods, m, 0, 1, m.seq);
  std::vector<ParamTensor> v;
  for (auto& mod : mods)
    for (auto& p : mod.params) v.push_back(std::move(p));
  return v;
}

namespace {
// The modules of the layers that stand for all of them: layer 0 of a dense model, every layer of a
// mixture of experts (dense first layers, MoE spacing), with how many layers that is.
std::pair<std::vector<Module>, int> representative_layers(const ModelShape& m) {
  const int layers = m.moe() ? m.layers : 1;
  std::vector<Module> mods;
  for (int l = 0; l < layers; ++l) append_layer(mods, m, l, 1, m.seq);
  return {std::move(mods), layers};
}

std::int64_t param_sum(const std::vector<Module>& mods) {
  std::int64_t n = 0;
  for (const auto& mod : mods) n += mod.param_elems();
  return n;
}
}  // namespace

std::int64_t layer_param_count(const ModelShape& m) {
  const auto [mods, layers] = representative_layers(m);
  return param_sum(mods) / layers;
}

int moe_layer_count(const ModelShape& m) {
  int n = 0;
  for (int l = 0; l < m.layers; ++l) n += m.arch.moe.is_moe_layer(l);
  return n;
}

std::int64_t active_param_count(const ModelShape& m) {
  const MoeShape& e = m.arch.moe;
  if (e.experts == 0) return total_param_count(m);
  // One expert's parameters, from the same builder as the modules.
  Module one{"expert", ModuleKind::Layer, {}, 0, {}, 0, true, -1, 0, {}};
  add_mlp(one, one, m, "", e.expert_ffn, 1);
  return total_param_count(m) -
         std::int64_t{moe_layer_count(m)} * (e.experts - e.top_k) * one.param_elems();
}

std::vector<Module> build_modules(const ModelShape& m, std::int64_t tokens, int seq) {
  const double T = static_cast<double>(tokens), h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab);
  std::vector<Module> mods;

  Module embed{"embed", ModuleKind::Embedding, {}, 0, {}, 0, false, -1, 0, {}};
  embed.params.push_back(
      {"word_embeddings", m.vocab * m.hidden, false, std::max(m.vocab, m.hidden)});
  if (m.learned_positions) {
    const std::int64_t rows = m.position_rows > 0 ? m.position_rows : seq;
    embed.params.push_back(
        {"position_embeddings", rows * m.hidden, false, std::max(rows, m.hidden)});
  }
  embed.gather_elems = embed.param_elems();
  // Gather of each token's row (read and write T x h), and of its position's with the add; the
  // backward's dense gradient: the table zeroed (V x h, and s x h for positions) and the tokens'
  // gradients read and added into their rows.
  embed.memory.add(MemoryKernel::Embedding, 4 * T * h, 4 * T * h + 2 * V * h, 1, 2);
  if (m.learned_positions)
    embed.memory.add(MemoryKernel::Embedding, 10 * T * h, 4 * T * h + 2.0 * seq * h, 2, 2);
  mods.push_back(embed);

  for (int l = 0; l < m.layers; ++l) append_layer(mods, m, l, T, seq);

  Module head{"head", ModuleKind::Head, {}, 0, {}, 0, false, -1, 0, {}};
  add_norm(head.params, m, "final_norm");
  head.gather_elems = head.param_elems() + m.vocab * m.hidden;
  if (!m.tied_embeddings)
    head.params.push_back({"lm_head", m.vocab * m.hidden, false, std::max(m.vocab, m.hidden)});
  head.gemms.push_back(linear_gemm("logits", T, h, V));
  add_norms(head, m, T, 1);
  // Softmax-cross-entropy over the vocabulary. PyTorch's cross_entropy, an FP32 op under autocast:
  // the BF16 logits cast to FP32 (read 2, write 4 bytes per logit), log_softmax (read 4, write 4);
  // backward: nll's gradient written (4), log_softmax's backward (read 8, write 4), the cast back
  // to BF16 (read 4, write 2): 14 bytes per logit forward, 22 backward, three kernels each way.
  // Fused (flash-attn's xentropy, ModelShape::fused_cross_entropy): one kernel each way on the BF16
  // logits, FP32 inside; forward reads them twice (the row max, then the sum of exponentials; per
  // token it writes only the loss and the log-sum-exp), backward reads them and writes their
  // gradient: 4 bytes per logit each way.
  if (m.fused_cross_entropy)
    head.memory.add(MemoryKernel::Loss, 4 * T * V, 4 * T * V, 1, 1);
  else
    head.memory.add(MemoryKernel::Loss, 14 * T * V, 22 * T * V, 3, 3);
  mods.push_back(head);
  return mods;
}

std::int64_t total_param_count(const ModelShape& m) {
  std::int64_t n = 0;
  for (const auto& mod : build_modules(m, 1, m.seq)) n += mod.param_elems();
  return n;
}

LargestLayer largest_layer(const ModelShape& m) {
  LargestLayer best;
  for (const auto& mod : build_modules(m, 1, m.seq)) {
    // A tensor's owner: its name up to the last dot ("qkv.weight" and "qkv.bias" -> "qkv").
    std::map<std::string, std::int64_t> owned;
    for (const auto& p : mod.params) owned[p.name.substr(0, p.name.rfind('.'))] += p.elems;
    for (const auto& [owner, params] : owned)
      if (params > best.params)
        best = {mod.layer >= 0 ? "layer" + std::to_string(mod.layer) + "." + owner : owner, params};
  }
  return best;
}

double model_forward_flops(const ModelShape& m, std::int64_t tokens, int seq) {
  double f = 0;
  for (const auto& mod : build_modules(m, tokens, seq)) f += mod.forward_flops();
  return f;
}

namespace {
// Activation bytes (FP16) of layer l's forward kept for its backward.
double layer_bytes(const ModelShape& m, double T, int seq, bool moe_layer,
                   AttentionImpl attention) {
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  const double kv = static_cast<double>(m.kv_dim()), q = static_cast<double>(m.q_dim());
  const double a = m.heads, drop = m.dropout ? 1.0 : 0.0;
  const MlaShape& mla = m.arch.mla;
  // What the attention core keeps besides its inputs (Q, K, V) and output (the output
  // projection's input): eager, the softmax output (+ dropout mask and output), a x s per token;
  // flash, the FP32 logsumexp, one per head and token (transformer.hpp).
  const double core =
      attention == AttentionImpl::Flash ? 4 * a * T : 2 * a * seq * T + drop * 3 * a * seq * T;
  // The norm inputs; attention: QKV input, Q, K, V, the core's, output-projection input, dropout
  // mask; MLP: first GEMM input, then the intermediate tensors.
  double norms = m.arch.layer_norms * 2 * T * h;
  double attn = 2 * T * h + 2 * T * q + 4 * T * kv + core + 2 * T * q + drop * T * h;
  if (mla.kv_lora_rank > 0) {
    // The latents (query, key/value), then each head's Q, K and V and the output input.
    const double qk = mla.qk_nope_dim + mla.qk_rope_dim, v = mla.v_dim;
    attn = 2 * T * h + 2 * T * (mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_dim) +
           2 * T * a * (2 * qk + v) + core + 2 * T * a * v + drop * T * h;
  }
  double mlp = m.gated_ffn ? 2 * T * h + 8 * T * f : 2 * T * h + 4 * T * f + drop * T * h;
  if (moe_layer) {
    // Each token's copy sent to each of its top_k experts, their intermediates, the shared one's.
    const MoeShape& e = m.arch.moe;
    const double ef = static_cast<double>(e.expert_ffn), sf = static_cast<double>(e.shared_ffn);
    const double per = m.gated_ffn ? 8 : 4;
    mlp = 2 * T * h + e.top_k * T * (2 * h + per * ef) + per * T * sf;
  }
  return norms + attn + mlp;
}
}  // namespace

double layer_activation_bytes(const ModelShape& m, std::int64_t tokens, int seq,
                              AttentionImpl attention) {
  const double T = static_cast<double>(tokens);
  const double dense = layer_bytes(m, T, seq, false, attention);
  return moe_layer_count(m) > 0 ? std::max(dense, layer_bytes(m, T, seq, true, attention)) : dense;
}

double layer_checkpoint_bytes(const ModelShape& m, std::int64_t tokens) {
  return 2.0 * static_cast<double>(tokens) * static_cast<double>(m.hidden);
}

double head_activation_bytes(const ModelShape& m, std::int64_t tokens) {
  const double T = static_cast<double>(tokens);
  // The final norm's output (the head's input), then per logit: PyTorch's loss keeps the BF16
  // logits and the FP32 log_softmax output (6 bytes); the fused loss keeps the BF16 logits, and
  // its backward writes their BF16 gradient while they are alive (4 bytes).
  return 2 * T * static_cast<double>(m.hidden) +
         (m.fused_cross_entropy ? 4 : 6) * T * static_cast<double>(m.vocab);
}

double activation_bytes(const ModelShape& m, std::int64_t tokens, int seq, bool checkpointing,
                        AttentionImpl attention) {
  const double full = layer_activation_bytes(m, tokens, seq, attention);
  const int moe = moe_layer_count(m);
  const double T = static_cast<double>(tokens);
  // Without checkpointing every layer keeps its own; MoE and dense layers differ.
  const double all = moe == 0 ? m.layers * full
                              : (m.layers - moe) * layer_bytes(m, T, seq, false, attention) +
                                    moe * layer_bytes(m, T, seq, true, attention);
  const double layers = checkpointing ? m.layers * layer_checkpoint_bytes(m, tokens) : all;
  return layers + (checkpointing ? full : 0) + head_activation_bytes(m, tokens);
}

double megatron_step_flops(const ModelShape& m, double sequences, int seq, bool checkpointing) {
  const double s = seq, l = m.layers, h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab);
  const double factor = checkpointing ? 96 : 72;
  return factor * sequences * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace zerosim
