// Hugging Face configs by model_type: the published configs under workloads/hf/ counted against
// their published parameter counts (workloads/hf/README.md), MoE FLOPs by top-k, and the refusal of
// an architecture this reader does not know.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/workload/hf_config.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

ModelShape hf(const std::string& file) { return load_model(data_dir() + "/workloads/hf/" + file); }

ModelShape from_text(const std::string& text) {
  return parse_model(parse_json_text(text, "config.json"), "config.json");
}

// A published count matches when within 1% or within half a unit of its last quoted digit ("7B"
// stands for [6.5B, 7.5B)), whichever is wider: most published counts are rounded.
void check_published(std::int64_t counted, double published, double quoted_unit) {
  const double tolerance = std::max(0.01 * published, 0.5 * quoted_unit);
  CAPTURE(counted);
  CAPTURE(published);
  CHECK(std::abs(static_cast<double>(counted) - published) <= tolerance);
}

void check_error(const std::string& text, const std::string& path, const std::string& words) {
  CAPTURE(text);
  const auto e = caught_input_error([&] { from_text(text); });
  CAPTURE(e.what());
  CHECK(e.file() == "config.json");
  CHECK(std::string(e.what()).find(path) != std::string::npos);
  CHECK(std::string(e.what()).find(words) != std::string::npos);
}

}  // namespace

TEST_CASE("every published config's count matches its published count") {
  struct Case {
    const char* file;
    double total, total_unit;  // published, and the unit of its last quoted digit
  };
  const Case cases[] = {
      // "7B, 13B, and 70B": Llama 2's sizes, to one significant digit.
      {"llama-2-70b.json", 70e9, 10e9},      {"mistral-7b-v0.1.json", 7e9, 1e9},
      {"mixtral-8x7b-v0.1.json", 47e9, 1e9}, {"qwen1.5-moe-a2.7b.json", 14.3e9, 0.1e9},
      {"deepseek-v2-lite.json", 16e9, 1e9},  {"gpt-neox-20b.json", 20554567680.0, 1},
      {"falcon-7b.json", 7e9, 1e9},          {"phi-3-mini-4k-instruct.json", 3.8e9, 0.1e9},
      {"qwen3-8b.json", 8.2e9, 0.1e9},       {"qwen3-30b-a3b.json", 30.5e9, 0.1e9},
      {"gemma-3-1b-pt.json", 1e9, 1e9},      {"olmo-2-1124-7b.json", 7e9, 1e9},
      {"starcoder2-3b.json", 3e9, 1e9},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    check_published(total_param_count(hf(c.file)), c.total, c.total_unit);
  }
}

TEST_CASE("exact counts of the published configs (the architectures' tensors, summed)") {
  // Each is the sum of the tensors the family's transformers model creates: a change to any is a
  // change of architecture, not of rounding.
  CHECK(total_param_count(hf("llama-2-70b.json")) == 68976648192);
  CHECK(total_param_count(hf("mistral-7b-v0.1.json")) == 7241732096);
  CHECK(total_param_count(hf("mixtral-8x7b-v0.1.json")) == 46702792704);
  CHECK(total_param_count(hf("qwen1.5-moe-a2.7b.json")) == 14315784192);
  CHECK(total_param_count(hf("deepseek-v2-lite.json")) == 15706484224);
  CHECK(total_param_count(hf("gpt-neox-20b.json")) == 20554567680);
  CHECK(total_param_count(hf("falcon-7b.json")) == 6921720704);
  CHECK(total_param_count(hf("phi-3-mini-4k-instruct.json")) == 3821079552);
  CHECK(total_param_count(hf("qwen3-8b.json")) == 8190735360);
  CHECK(total_param_count(hf("qwen3-30b-a3b.json")) == 30532122624);
  CHECK(total_param_count(hf("gemma-3-1b-pt.json")) == 999885952);
  CHECK(total_param_count(hf("olmo-2-1124-7b.json")) == 7298617344);
  CHECK(total_param_count(hf("starcoder2-3b.json")) == 3030371328);
}

TEST_CASE("Mixtral: 46.7B parameters, 12.9B active; every layer is MoE") {
  const auto m = hf("mixtral-8x7b-v0.1.json");
  CHECK(m.family == "mixtral");
  CHECK(m.arch.moe.experts == 8);
  CHECK(m.arch.moe.top_k == 2);
  CHECK(moe_layer_count(m) == 32);
  CHECK(total_param_count(m) == zerosim::testing::Approx(46.7e9).epsilon(0.001));
  CHECK(active_param_count(m) == zerosim::testing::Approx(12.9e9).epsilon(0.002));
  check_published(active_param_count(m), 13e9, 1e9);
  // Without model_type the class in "architectures" decides.
  auto j = load_json_file(data_dir() + "/workloads/hf/mixtral-8x7b-v0.1.json");
  j.erase("model_type");
  CHECK(total_param_count(parse_model(j, "x.json")) == total_param_count(m));
}

TEST_CASE("Qwen1.5-MoE: shared expert with its gate, 2.7B active") {
  const auto m = hf("qwen1.5-moe-a2.7b.json");
  CHECK(m.arch.qkv_bias);
  CHECK(m.arch.moe.shared_ffn == 5632);
  CHECK(m.arch.moe.shared_gate);
  check_published(active_param_count(m), 2.7e9, 0.1e9);
  // decoder_sparse_step 2: layers 1, 3, 5, ... are sparse; mlp_only_layers makes one dense.
  auto j = load_json_file(data_dir() + "/workloads/hf/qwen1.5-moe-a2.7b.json");
  j["decoder_sparse_step"] = 2;
  j["mlp_only_layers"] = json::array({1});
  const auto s = parse_model(j, "x.json");
  CHECK(!s.arch.moe.is_moe_layer(0));
  CHECK(!s.arch.moe.is_moe_layer(1));
  CHECK(s.arch.moe.is_moe_layer(3));
  CHECK(moe_layer_count(s) == 11);
}

TEST_CASE("DeepSeek-V2-Lite: MLA attention, one dense layer first, two shared experts") {
  const auto m = hf("deepseek-v2-lite.json");
  CHECK(m.arch.mla.kv_lora_rank == 512);
  CHECK(m.arch.mla.q_lora_rank == 0);
  CHECK(m.arch.moe.first_dense == 1);
  CHECK(m.arch.moe.shared_ffn == 2 * 1408);
  CHECK(moe_layer_count(m) == 26);
  // One MLA layer's attention: q, kv_a (latent + rotary key), its norm, kv_b, output.
  const std::int64_t h = 2048, H = 16;
  const std::int64_t attn =
      h * H * 192 + h * (512 + 64) + 512 + 512 * H * (128 + 128) + H * 128 * h;
  const auto mods = build_modules(m, 1, m.seq);
  CHECK(mods[1].name == "layer0.qkv");
  CHECK(mods[1].param_elems() + mods[2].param_elems() == attn + h);  // + the input norm
  // V3-style: a query latent, the score correction bias.
  auto j = load_json_file(data_dir() + "/workloads/hf/deepseek-v2-lite.json");
  j["model_type"] = "deepseek_v3";
  j["architectures"] = json::array({"DeepseekV3ForCausalLM"});
  j["q_lora_rank"] = 256;
  j["topk_method"] = "noaux_tc";
  const auto v3 = parse_model(j, "x.json");
  CHECK(v3.arch.moe.router_bias);
  CHECK(total_param_count(v3) - total_param_count(m) ==
        27 * (h * 256 + 256 + 256 * H * 192 - h * H * 192) + 26 * 64);
}

TEST_CASE("GPT-NeoX-20B: plain GELU MLP, biases, parallel attention; 20.55B") {
  const auto m = hf("gpt-neox-20b.json");
  CHECK(m.family == "gpt_neox");
  CHECK(!m.gated_ffn);
  CHECK(m.bias);
  CHECK(m.layernorm);
  CHECK(m.arch.parallel_attn);
  CHECK(!m.tied_embeddings);
  CHECK(layer_param_count(m) == 12 * 6144LL * 6144 + 13 * 6144);
}

TEST_CASE("Falcon-7B: multi-query attention, one shared norm, tied head") {
  const auto m = hf("falcon-7b.json");
  CHECK(m.family == "falcon");
  CHECK(m.kv_heads == 1);
  CHECK(m.arch.layer_norms == 1);
  CHECK(m.tied_embeddings);
  CHECK(m.seq == 2048);
}

TEST_CASE("dense families: Gemma's head width and tied GeGLU, Qwen2's q/k/v biases, GPT-2") {
  const auto gemma = from_text(R"({"model_type": "gemma", "hidden_size": 3072,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
    "intermediate_size": 24576, "vocab_size": 256000, "max_position_embeddings": 8192,
    "hidden_act": "gelu", "hidden_activation": null})");
  CHECK(gemma.tied_embeddings);
  CHECK(gemma.head_dim() == 256);
  CHECK(gemma.q_dim() == 4096);
  CHECK(total_param_count(gemma) == 8537680896);  // Gemma-7B's published 8.54B
  const auto gemma2 = from_text(R"({"model_type": "gemma2", "hidden_size": 3584,
    "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
    "intermediate_size": 14336, "vocab_size": 256000, "max_position_embeddings": 8192,
    "hidden_activation": "gelu_pytorch_tanh"})");
  CHECK(gemma2.arch.layer_norms == 4);
  CHECK(total_param_count(gemma2) == 9241705984);  // Gemma-2-9B
  const auto qwen2 = from_text(R"({"model_type": "qwen2", "hidden_size": 3584,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 32768,
    "tie_word_embeddings": false})");
  CHECK(qwen2.arch.qkv_bias);
  CHECK(total_param_count(qwen2) == 7615616512);  // Qwen2-7B
  const auto gpt2 = from_text(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
    "n_head": 12, "n_inner": null, "n_positions": 1024, "vocab_size": 50257,
    "activation_function": "gelu_new"})");
  CHECK(gpt2.ffn == 4 * 768);
  CHECK(gpt2.dropout);
  CHECK(total_param_count(gpt2) == 124439808);  // GPT-2 small
}

TEST_CASE("an MoE's FLOPs per token count its top-k experts; its gathers and memory all experts") {
  const auto m = hf("mixtral-8x7b-v0.1.json");
  const std::int64_t T = 4096;
  const int s = 4096;
  // Forward FLOPs: 2 per active parameter of every GEMM (the embedding lookup is none) plus
  // attention's 4·T·s·h per layer.
  const double embed = 32000.0 * 4096;
  const double fwd = 2.0 * T * (static_cast<double>(active_param_count(m)) - embed) -
                     2.0 * T * (4096.0 * 2 * 32 + 4096) +  // norms: no GEMM
                     32 * 4.0 * T * s * 4096;
  CHECK(model_forward_flops(m, T, s) == zerosim::testing::Approx(fwd).epsilon(1e-9));
  // Every expert is a module of its own, gathered whole.
  const auto mods = build_modules(m, T, s);
  std::int64_t gathered = 0;
  int experts = 0;
  for (const auto& mod : mods) {
    gathered += mod.param_elems();
    experts += mod.name.find(".expert") != std::string::npos;
  }
  CHECK(experts == 8 * 32);
  CHECK(gathered == total_param_count(m));
  // A dense model with the same active width costs the same FLOPs per token but 1/4 the weights.
  auto dense = m;
  dense.arch.moe = MoeShape{};
  dense.ffn = 2 * 14336;
  CHECK(model_forward_flops(dense, T, s) ==
        zerosim::testing::Approx(model_forward_flops(m, T, s) - 32 * 2.0 * T * 4096 * 8)
            .epsilon(1e-9));
}

TEST_CASE("an unknown architecture exits 2 naming the key and the supported list") {
  check_error(R"({"model_type": "mamba", "hidden_size": 768})", "/model_type",
              "unsupported model_type \"mamba\" (supported: llama, mistral");
  check_error(R"({"model_type": "mamba", "hidden_size": 768})", "/model_type", "deepseek_v3");
  check_error(R"({"architectures": ["MambaForCausalLM"], "hidden_size": 768})", "/architectures/0",
              "unsupported architecture");
  check_error(R"({"hidden_size": 768, "num_hidden_layers": 2})", "config.json",
              "missing model_type (supported:");
  check_error(R"({"model_type": "llama", "architectures": ["MixtralForCausalLM"]})", "/model_type",
              "contradicts");
  check_error(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 10,
    "max_position_embeddings": 8, "hidden_act": "swiglu_v9"})",
              "/hidden_act", "unsupported activation");
  check_error(R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 10,
    "max_position_embeddings": 8, "num_local_experts": 4, "num_experts_per_tok": 5})",
              "/num_experts_per_tok", "at most the number of experts");
  CHECK(supported_hf_model_types().find("gpt_neox") != std::string::npos);
}

TEST_CASE("a model's arch survives its JSON (workload file and result echo)") {
  for (const char* file : {"mixtral-8x7b-v0.1.json", "deepseek-v2-lite.json", "gpt-neox-20b.json",
                           "falcon-7b.json", "qwen1.5-moe-a2.7b.json"}) {
    CAPTURE(file);
    auto m = hf(file);
    m.family = "llama";  // a workload file's family; arch carries the rest
    json j = to_json(m);
    j["family"] = m.gated_ffn ? "llama" : "gpt";
    auto back = parse_model(j, "w.json");
    back.family = m.family;
    CHECK(back.arch == m.arch);
    CHECK(total_param_count(back) == total_param_count(m));
  }
  // Presets have no arch: their JSON is as before.
  CHECK(!to_json(load_model("llama-2-7b")).contains("arch"));
}

TEST_CASE("shapes whose counts would overflow or whose module list would not fit are refused") {
  check_error(R"({"model_type": "mixtral", "hidden_size": 1024, "num_hidden_layers": 65536,
    "num_attention_heads": 8, "intermediate_size": 2048, "vocab_size": 10,
    "max_position_embeddings": 8, "num_local_experts": 4096, "num_experts_per_tok": 2})",
              "config.json", "experts x layers");
  check_error(R"({"model_type": "gemma", "hidden_size": 1024, "num_hidden_layers": 2,
    "num_attention_heads": 1073741824, "head_dim": 1048576, "intermediate_size": 2048,
    "vocab_size": 10, "max_position_embeddings": 8})",
              "config.json", "heads x head width");
}

TEST_CASE("a config's default sequence length: its pretraining length or 4096, at most its limit") {
  const std::string base = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 10, )";
  auto seq_of = [&](const std::string& rest) { return from_text(base + rest); };
  // max_position_embeddings is the longest context, not a training length.
  const auto long_ctx = seq_of(R"("max_position_embeddings": 131072})");
  CHECK(long_ctx.seq == kHfDefaultSeqLen);
  CHECK(long_ctx.seq_source.find("the default for Hugging Face configs, 4096") == 0);
  CHECK(long_ctx.seq_source.find("max_position_embeddings 131072") != std::string::npos);
  // A stated pretraining length (Llama 3.1's rope_scaling) wins over the default.
  const auto llama31 = seq_of(R"("max_position_embeddings": 131072, "rope_scaling": {
    "factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
  CHECK(llama31.seq == 8192);
  CHECK(llama31.seq_source.find("pretraining length") != std::string::npos);
  // A shorter limit caps both.
  const auto short_ctx = seq_of(R"("max_position_embeddings": 2048})");
  CHECK(short_ctx.seq == 2048);
  CHECK(short_ctx.seq_source ==
        "the config's max_position_embeddings 2048, below the default 4096");
  // rope_scaling: null is no rope scaling; a non-object one is refused.
  CHECK(seq_of(R"("max_position_embeddings": 32768, "rope_scaling": null})").seq == 4096);
  check_error(base + R"("max_position_embeddings": 32768, "rope_scaling": 2})", "/rope_scaling",
              "must be an object");
  // GPT-2 reads n_positions; workload presets keep their own seq and no rule.
  CHECK(from_text(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4,
    "vocab_size": 10, "n_positions": 1024})")
            .seq == 1024);
  CHECK(load_model("llama-3-8b").seq_source.empty());
}

TEST_CASE("Qwen 3: RMSNorm on each head's query and key; Qwen3-MoE has no shared expert") {
  const auto q = hf("qwen3-8b.json");
  CHECK(q.family == "qwen3");
  CHECK(q.arch.qk_norm == QkNorm::PerHead);
  CHECK(!q.arch.qkv_bias);
  // One layer: q, k, v, o; gate, up, down; two norms and the two head_dim-wide q/k norms.
  const std::int64_t h = 4096, d = 128, f = 12288;
  CHECK(layer_param_count(q) == h * 32 * d * 2 + h * 8 * d * 2 + 3 * h * f + 2 * h + 2 * d);
  const auto moe = hf("qwen3-30b-a3b.json");
  CHECK(moe.family == "qwen3_moe");
  CHECK(moe.arch.moe.experts == 128);
  CHECK(moe.arch.moe.top_k == 8);
  CHECK(moe.arch.moe.shared_ffn == 0);
  CHECK(moe_layer_count(moe) == 48);
  // "3.3B activated" on its model card; zerosim counts 3.35B (both embedding tables and every
  // parameter but the 120 unrouted experts of each layer), 1.6% above: not checked, as DeepSeek's.
  CHECK(active_param_count(moe) == 3353032704);
}

TEST_CASE("Gemma 3: text config and a multimodal config's text_config, with their defaults") {
  const auto g = hf("gemma-3-1b-pt.json");
  CHECK(g.family == "gemma3_text");
  CHECK(g.arch.layer_norms == 4);
  CHECK(g.arch.qk_norm == QkNorm::PerHead);
  CHECK(g.tied_embeddings);  // Gemma3TextConfig's default
  // The Gemma 3 report's table of sizes: 1B has 302M embedding and 698M non-embedding parameters.
  const std::int64_t embedding = g.vocab * g.hidden;
  check_published(embedding, 302e6, 1e6);
  check_published(total_param_count(g) - embedding, 698e6, 1e6);
  // The 4B model's multimodal config: its text_config states what differs from the defaults
  // (8 heads of 256, vocabulary 262208); the report gives 3,209M non-embedding parameters.
  const auto mm = from_text(R"({"architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3", "text_config": {"hidden_size": 2560, "intermediate_size": 10240,
    "model_type": "gemma3_text", "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0,
    "rope_type": "linear"}, "sliding_window": 1024}, "vision_config": {"hidden_size": 1152}})");
  CHECK(mm.family == "gemma3");
  CHECK(mm.heads == 8);
  CHECK(mm.kv_heads == 4);
  CHECK(mm.vocab == 262208);
  CHECK(mm.seq == 4096);  // linear RoPE scaling states no pretraining length
  CHECK(mm.source.find("vision encoder is not modelled") != std::string::npos);
  check_published(total_param_count(mm) - mm.vocab * mm.hidden, 3209e6, 1e6);
  check_error(R"({"model_type": "gemma3", "text_config": 3})", "/text_config", "must be an object");
}

TEST_CASE("OLMo 2: RMSNorms over the whole query and key projections") {
  const auto o = hf("olmo-2-1124-7b.json");
  CHECK(o.family == "olmo2");
  CHECK(o.arch.qk_norm == QkNorm::Full);
  const std::int64_t h = 4096, f = 11008;
  CHECK(layer_param_count(o) == 4 * h * h + 3 * h * f + 2 * h + 2 * h);
  // The arch survives its JSON.
  json j = to_json(o);
  j["family"] = "llama";
  CHECK(parse_model(j, "w.json").arch == o.arch);
}

TEST_CASE("StarCoder2: biased q/k/v/o and plain MLP, LayerNorms with bias, tied head") {
  const auto m = hf("starcoder2-3b.json");
  CHECK(m.family == "starcoder2");
  CHECK_FALSE(m.gated_ffn);
  CHECK(m.layernorm);
  CHECK(m.tied_embeddings);
  CHECK(m.dropout);
  CHECK(m.arch.activation == "gelu_pytorch_tanh");
  const std::int64_t h = 3072, f = 12288, kv = 2 * 128;
  // q, o: h x h + h; k, v: h x kv + kv; c_fc, c_proj: h x f + f, f x h + h; two LayerNorms.
  CHECK(layer_param_count(m) ==
        2 * (h * h + h) + 2 * (h * kv + kv) + (h * f + f) + (f * h + h) + 2 * (2 * h));
  // Without use_bias no linear has one; an untied head adds vocab x hidden.
  const std::int64_t tied = total_param_count(m);
  const auto nobias = from_text(R"({"model_type": "starcoder2", "hidden_size": 3072,
      "intermediate_size": 12288, "num_attention_heads": 24, "num_key_value_heads": 2,
      "num_hidden_layers": 30, "vocab_size": 49152, "max_position_embeddings": 16384,
      "use_bias": false, "tie_word_embeddings": false})");
  CHECK(total_param_count(nobias) == tied - 30 * (h + kv + kv + h + f + h) + 49152 * h);
}
