// MPT: the presets of LLM Foundry's pretrain yamls counted against every row of its published
// A100 tables (NumParams, which follows the run's sequence length through the learned position
// table), and Hugging Face MPT configs read as LLM Foundry's MPTForCausalLM builds them.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

namespace {

struct Row {
  std::string model;  // "7b"
  int seq = 0;
  std::int64_t num_params = 0;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  std::getline(ss, cell, '|');  // before the first bar
  while (std::getline(ss, cell, '|')) {
    const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return out;
}

// The data rows of a published table: "|  7b | 8192 | ... | 6684024832 |", columns named by its
// header row.
std::vector<Row> read_table(const std::string& file) {
  std::ifstream in(std::string(ZEROSIM_SOURCE_DIR) + "/tests/workload/data/" + file);
  REQUIRE(in);
  std::vector<Row> rows;
  std::vector<std::string> header;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) continue;
    const auto c = cells(line);
    if (header.empty()) {
      header = c;
      continue;
    }
    if (c.empty() || c[0].rfind("---", 0) == 0) continue;
    REQUIRE(c.size() == header.size());
    Row r;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (header[i] == "Model") r.model = c[i];
      if (header[i] == "SeqLen (T)") r.seq = std::stoi(c[i]);
      if (header[i] == "NumParams") r.num_params = std::stoll(c[i]);
    }
    rows.push_back(r);
  }
  return rows;
}

ModelShape from_text(const std::string& text) {
  return parse_model(parse_json_text(text, "config.json"), "config.json");
}

// mosaicml/mpt-7b's config.json, its shape keys (ALiBi, no biases, torch attention).
const char* kMpt7b = R"({"architectures": ["MPTForCausalLM"], "model_type": "mpt",
  "attn_config": {"alibi": true, "alibi_bias_max": 8, "attn_impl": "torch", "attn_pdrop": 0,
                  "attn_type": "multihead_attention", "clip_qkv": null, "qk_ln": false},
  "d_model": 4096, "emb_pdrop": 0, "expansion_ratio": 4, "learned_pos_emb": true,
  "max_seq_len": 2048, "n_heads": 32, "n_layers": 32, "no_bias": true,
  "norm_type": "low_precision_layernorm", "resid_pdrop": 0, "vocab_size": 50432})";

}  // namespace

TEST_CASE("every row of both LLM Foundry A100 tables: NumParams at the row's sequence length") {
  int rows = 0;
  for (const char* file : {"llm-foundry-a100-80gb.md", "llm-foundry-a100-40gb.md"}) {
    for (const Row& r : read_table(file)) {
      CAPTURE(file);
      CAPTURE(r.model);
      CAPTURE(r.seq);
      const ModelShape m = with_sequence_length(load_model("mpt-" + r.model), r.seq);
      // Exact: the published count is the sum of the tensors MPT creates (its position table
      // has max_seq_len = the run's sequence length rows).
      CHECK(total_param_count(m) == r.num_params);
      ++rows;
    }
  }
  CHECK(rows == 61 + 78);  // every row of both tables (the issue counts 139)
}

TEST_CASE("an MPT preset: GPT's layers without dropout, FlashAttention, 12 h^2 + 13 h per layer") {
  const ModelShape m = load_model("mpt-7b");
  CHECK(m.family == "mpt");
  CHECK(!m.gated_ffn);
  CHECK(m.bias);
  CHECK(m.layernorm);
  CHECK(m.tied_embeddings);
  CHECK(m.learned_positions);
  CHECK(!m.dropout);
  CHECK(m.flash_attention);
  CHECK(trains_with_flash_attention(m));
  CHECK(!trains_with_flash_attention(load_model("gpt-18b")));
  // LLM Foundry's fused loss: the family's default, written back only where a file overrides it.
  CHECK(m.fused_cross_entropy);
  CHECK(!load_model("gpt-18b").fused_cross_entropy);
  CHECK(!to_json(m).contains("fused_cross_entropy"));
  ModelShape torch_loss = m;
  torch_loss.fused_cross_entropy = false;
  CHECK(parse_model(to_json(torch_loss), "mpt.json") == torch_loss);
  const std::int64_t h = 4096, V = 50368, L = 32;
  CHECK(layer_param_count(m) == 12 * h * h + 13 * h);
  for (int seq : {512, 2048, 65536})
    CHECK(total_param_count(with_sequence_length(m, seq)) ==
          V * h + seq * h + L * (12 * h * h + 13 * h) + 2 * h);
  // A model without a position table is the same at every length.
  const ModelShape llama = load_model("llama-3-8b");
  CHECK(with_sequence_length(llama, 1024) == llama);
}

TEST_CASE("Hugging Face MPT: ALiBi has no position table, no_bias removes the norms' biases too") {
  const ModelShape m = from_text(kMpt7b);
  CHECK(m.family == "mpt");
  CHECK(!m.learned_positions);  // ALiBi
  CHECK(!m.bias);
  CHECK(!m.arch.norm_bias);
  CHECK(!m.flash_attention);  // attn_impl torch
  CHECK(m.seq == 2048);
  const std::int64_t h = 4096, V = 50432, L = 32;
  CHECK(total_param_count(m) == V * h + L * (12 * h * h + 2 * h) + h);
  // "6.7B" on its model card (to one decimal); 6.649B counted is within 1%.
  CHECK(static_cast<double>(total_param_count(m)) == zerosim::testing::Approx(6.7e9).epsilon(0.01));
}

TEST_CASE("Hugging Face MPT as LLM Foundry's yamls configure it: the preset's count") {
  auto j = parse_json_text(kMpt7b, "config.json");
  j["attn_config"]["alibi"] = false;
  j["attn_config"]["attn_impl"] = "flash";
  j["no_bias"] = false;
  j["vocab_size"] = 50368;
  j["max_seq_len"] = 8192;
  const ModelShape m = parse_model(j, "config.json");
  CHECK(m.flash_attention);
  CHECK(m.learned_positions);
  CHECK(total_param_count(m) == 6684024832);  // the 7b rows at seq 8192
  // RoPE gives positions without a table, as ALiBi does (configuration_mpt.py).
  j["attn_config"]["rope"] = true;
  CHECK(total_param_count(parse_model(j, "config.json")) == 6684024832 - 8192 * 4096);
  // Grouped-query attention: the fused Wqkv is h x (h + 2 kv_n_heads x head width).
  j["attn_config"]["attn_type"] = "grouped_query_attention";
  j["attn_config"]["kv_n_heads"] = 8;
  const ModelShape g = parse_model(j, "config.json");
  CHECK(g.kv_heads == 8);
  // A gated MLP of an explicit width.
  j["ffn_config"] = json{{"ffn_type", "mptglu"}, {"ffn_hidden_size", 11008}};
  const ModelShape glu = parse_model(j, "config.json");
  CHECK(glu.gated_ffn);
  CHECK(glu.ffn == 11008);
}

TEST_CASE("Hugging Face MPT: bad values name the key and the rule") {
  auto bad = [](const char* key, const json& value, const char* path, const char* words) {
    auto j = parse_json_text(kMpt7b, "config.json");
    j[json::json_pointer(key)] = value;
    const auto e = caught_input_error([&] { parse_model(j, "config.json"); });
    CAPTURE(e.what());
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  };
  bad("/attn_config/attn_impl", "xformers", "/attn_config/attn_impl", "supported: torch");
  bad("/attn_config", "flash", "/attn_config", "must be an object");
  bad("/expansion_ratio", 4.0001, "/expansion_ratio", "whole width");
  bad("/norm_type", "batchnorm", "/norm_type", "low_precision_layernorm");
  bad("/ffn_config", json{{"ffn_type", "mb_moe"}}, "/ffn_config/ffn_type", "mptglu");
  bad("/d_model", 0, "/d_model", "at least 1");
}
