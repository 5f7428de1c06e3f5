// Fuzzes workload files and Hugging Face config.json (parse_model picks the reader), then the
// derived sizes: a shape the parser accepts must not overflow the parameter and FLOP arithmetic.
#include "fuzz/fuzz_common.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const auto j = zerosim::parse_json_text(zerosim::fuzz::as_text(data, size), "fuzz-model.json");
    const zerosim::ModelShape m = zerosim::parse_model(j, "fuzz-model.json");
    (void)zerosim::total_param_count(m);
    (void)zerosim::model_forward_flops(m, m.seq, m.seq);
  });
  return 0;
}
