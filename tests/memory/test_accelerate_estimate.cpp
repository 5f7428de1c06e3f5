// Accelerate's estimate-memory table (sim/memory/accelerate_estimate.hpp) against its closed form
// (accelerate/commands/estimate.py: FP32 sizes divided by 2, 4, 8 for float16, int8, int4;
// training with Adam 4x the dtype's size), convert_bytes as Python prints it, and the largest
// layer as get_max_layer_size counts it (a whole decoder layer or a leaf outside one).
#include <doctest/doctest.h>

#include <string>

#include "sim/core/data_dir.hpp"
#include "sim/memory/accelerate_estimate.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"

using namespace zerosim;

TEST_CASE("the four rows: FP32 sizes over 1, 2, 4, 8; training 4x the total in that dtype") {
  const std::int64_t P = 8'030'261'248, L = 525'336'576;
  const auto rows = accelerate_estimate(P, L);
  REQUIRE(rows.size() == 4);
  const char* dtypes[] = {"float32", "float16", "int8", "int4"};
  const double divisors[] = {1, 2, 4, 8};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(rows[i].dtype == dtypes[i]);
    CHECK(rows[i].largest_layer_bytes == 4.0 * L / divisors[i]);
    CHECK(rows[i].total_bytes == 4.0 * P / divisors[i]);
    CHECK(rows[i].training_bytes == 16.0 * P / divisors[i]);
  }
}

TEST_CASE("convert_bytes: divided by 1024 while at least 1024, Python's round(size, 2)") {
  CHECK(accelerate_convert_bytes(512) == "512 bytes");
  CHECK(accelerate_convert_bytes(1023.5) == "1023.5 bytes");
  CHECK(accelerate_convert_bytes(1024) == "1.0 KB");
  CHECK(accelerate_convert_bytes(1.5 * 1024 * 1024 * 1024) == "1.5 GB");
  CHECK(accelerate_convert_bytes(4.0 * 8'030'261'248) == "29.92 GB");  // 29.915 GiB
  CHECK(accelerate_convert_bytes(1024.0 * 1024 * 1024 * 1024 * 1024) == "1.0 PB");
  CHECK(accelerate_convert_bytes(2100.0 * 1024 * 1024 * 1024 * 1024) == "2.05 PB");
}

TEST_CASE("largest layer: llama-3-8b's embedding, gpt-18b's decoder layer, mixtral's whole layer") {
  const ModelShape llama = load_model("llama-3-8b");
  const LargestLayer a = largest_unsplit_module(llama);
  // The embedding (vocab x hidden) is larger than a decoder layer: attention 4096 x (4096 + 2 x
  // 1024 + 4096), MLP 3 x 4096 x 14336, two norms; the head of the same size comes later.
  CHECK(a.name == "word_embeddings");
  CHECK(a.params == 128256LL * 4096);
  CHECK(layer_param_count(llama) == 4096LL * (2 * 4096 + 2 * 1024) + 3LL * 4096 * 14336 + 2 * 4096);

  const ModelShape gpt = load_model("gpt-18b");
  const LargestLayer b = largest_unsplit_module(gpt);
  CHECK(b.name == "layer0");
  CHECK(b.params == layer_param_count(gpt));
  CHECK(b.params > gpt.vocab * gpt.hidden);

  const ModelShape moe = load_model(data_dir() + "/workloads/hf/mixtral-8x7b-v0.1.json");
  const LargestLayer c = largest_unsplit_module(moe);
  CHECK(c.name == "layer0");
  // Every expert of the layer: 8 x 3 x 4096 x 14336 of MLP alone.
  CHECK(c.params > 8LL * 3 * 4096 * 14336);
  CHECK(c.params == layer_param_count(moe));
}

TEST_CASE("the table: title, header, one row per dtype in Accelerate's units") {
  const std::string t = format_accelerate_estimate("llama-3-8b", 8'030'261'248, 525'336'576);
  CHECK(t.rfind("Memory Usage for loading `llama-3-8b`\n", 0) == 0);
  CHECK(t.find("dtype") != std::string::npos);
  CHECK(t.find("Training using Adam") != std::string::npos);
  // Python's own convert_bytes on the same counts prints these cells (float16's largest layer,
  // 1002 MiB, stays in MB).
  CHECK(t.find("  float32        1.96 GB    29.92 GB            119.66 GB\n") != std::string::npos);
  CHECK(t.find("  float16      1002.0 MB    14.96 GB             59.83 GB\n") != std::string::npos);
  CHECK(t.find("  int8          501.0 MB     7.48 GB             29.92 GB\n") != std::string::npos);
  CHECK(t.find("  int4          250.5 MB     3.74 GB             14.96 GB\n") != std::string::npos);
}
