// Fuzzes DeepSpeed JSON configs (parse_deepspeed).
#include "fuzz/fuzz_common.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/strategy/strategy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const auto j = zerosim::parse_json_text(zerosim::fuzz::as_text(data, size), "fuzz-ds.json");
    const zerosim::Strategy s = zerosim::parse_deepspeed(j, "fuzz-ds.json");
    (void)zerosim::to_json(s).dump();
  });
  return 0;
}
