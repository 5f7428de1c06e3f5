// Every published Hugging Face config under workloads/hf/ runs with the README's command shape and
// no other flag (`simulate --cluster dgx-h100 --nodes 64 --model FILE --strategy zeropp`): it fits
// at its default sequence length, which is its pretraining length or 4096 and at most its position
// limit (never max_position_embeddings when that is longer), and the output says the length and
// the rule that gave it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sim/core/json_io.hpp"
#include "tests/support/run_cli.hpp"

namespace fs = std::filesystem;

TEST_CASE("every published HF config runs on 64 DGX H100 nodes with ZeRO++ and no other flag") {
  // The default each config gets, from its own keys: 4096 unless the position limit is lower
  // (GPT-NeoX-20B's max_position_embeddings 2048; Falcon-7B's first config states none and the
  // family's limit is 2048), or its rope_scaling states the pretraining length (DeepSeek-V2-Lite:
  // original_max_position_embeddings 4096 under max_position_embeddings 163840).
  const std::map<std::string, int> expected = {
      {"llama-2-70b.json", 4096},       {"mistral-7b-v0.1.json", 4096},
      {"mixtral-8x7b-v0.1.json", 4096}, {"qwen1.5-moe-a2.7b.json", 4096},
      {"deepseek-v2-lite.json", 4096},  {"gpt-neox-20b.json", 2048},
      {"falcon-7b.json", 2048},         {"phi-3-mini-4k-instruct.json", 4096},
      {"qwen3-8b.json", 4096},          {"qwen3-30b-a3b.json", 4096},
      {"gemma-3-1b-pt.json", 4096},     {"olmo-2-1124-7b.json", 4096},
      {"starcoder2-3b.json", 4096},
  };
  int configs = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(ZEROSIM_SOURCE_DIR) / "workloads/hf")) {
    if (entry.path().extension() != ".json") continue;
    const std::string file = entry.path().filename().string();
    CAPTURE(file);
    REQUIRE(expected.count(file) == 1);  // a new config states its expected length here
    // The analytic tier: the default length, the fit and the counts do not depend on the tier,
    // and the flow tier's per-expert events cost seconds per MoE config (the flow run is below).
    const CliRun r = run("simulate --cluster dgx-h100 --nodes 64 --model " + entry.path().string() +
                         " --strategy zeropp --tier analytic --json");
    CAPTURE(r.out);
    REQUIRE(r.rc == 0);
    const zerosim::json j = zerosim::json::parse(r.out);
    const auto& sc = j["scenario"];
    CHECK(sc["seq_len"] == expected.at(file));
    CHECK(sc["seq_len_source"].get<std::string>() != "--seq-len");
    CHECK(sc["seq_len_source"] == sc["model"]["seq_source"]);
    CHECK(j["memory"]["fits"] == true);
    // Total and active parameters: equal for a dense model, fewer active for a mixture of experts.
    const bool moe = sc["model"].contains("arch") && sc["model"]["arch"].contains("moe");
    CHECK(sc["params"].get<std::int64_t>() > 0);
    if (moe)
      CHECK(sc["active_params"].get<std::int64_t>() < sc["params"].get<std::int64_t>());
    else
      CHECK(sc["active_params"] == sc["params"]);
    // The console says the length and where it comes from.
    const CliRun text = run("simulate --cluster dgx-h100 --nodes 64 --model " +
                            entry.path().string() + " --strategy zeropp --tier analytic");
    CHECK(text.rc == 0);
    CHECK(text.out.find("sequence length " + std::to_string(expected.at(file)) + ": ") !=
          std::string::npos);
    CHECK(text.out.find("--seq-len sets another") != std::string::npos);
    ++configs;
  }
  CHECK(configs == static_cast<int>(expected.size()));
  // The README's command shape exactly (flow tier, no other flag) on one config.
  const CliRun flow =
      run("simulate --cluster dgx-h100 --nodes 64 --model " + std::string(ZEROSIM_SOURCE_DIR) +
          "/workloads/hf/llama-2-70b.json --strategy zeropp --json");
  REQUIRE(flow.rc == 0);
  CHECK(zerosim::json::parse(flow.out)["scenario"]["seq_len"] == 4096);
}

TEST_CASE("--seq-len given: the result says so, and no default rule is printed") {
  const CliRun r =
      run("simulate --cluster dgx-h100 --nodes 2 --model " + std::string(ZEROSIM_SOURCE_DIR) +
          "/workloads/hf/mistral-7b-v0.1.json --strategy zeropp --seq-len 8192 "
          "--tier analytic --json");
  REQUIRE(r.rc == 0);
  const zerosim::json j = zerosim::json::parse(r.out);
  CHECK(j["scenario"]["seq_len"] == 8192);
  CHECK(j["scenario"]["seq_len_source"] == "--seq-len");
}

TEST_CASE("a config's learned position table bounds --seq-len") {
  const fs::path path = fs::temp_directory_path() / "zerosim_test_gpt2_positions.json";
  {
    std::ofstream(path) << R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
      "vocab_size": 50257, "n_positions": 1024})";
  }
  const std::string base = "simulate --cluster dgx-h100 --nodes 1 --model " + path.string() +
                           " --strategy zero3 --tier analytic ";
  const CliRun fits = run(base + "--json");
  REQUIRE(fits.rc == 0);
  const zerosim::json j = zerosim::json::parse(fits.out);
  CHECK(j["scenario"]["seq_len"] == 1024);  // its position limit, below 4096
  CHECK(j["scenario"]["model"]["position_rows"] == 1024);
  // GPT-2 small: 124,439,808 parameters, the 1024-row table included at any run length.
  CHECK(j["scenario"]["params"] == 124439808);
  const CliRun shorter = run(base + "--seq-len 512 --json");
  REQUIRE(shorter.rc == 0);
  CHECK(zerosim::json::parse(shorter.out)["scenario"]["params"] == 124439808);
  const CliRun longer = run(base + "--seq-len 2048");
  CHECK(longer.rc == 2);
  CHECK(longer.out.find("--seq-len") != std::string::npos);
  CHECK(longer.out.find("learned position table (1024 rows") != std::string::npos);
  fs::remove(path);
}
