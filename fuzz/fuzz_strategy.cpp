// Fuzzes the --strategy flag ("zero3+qwz+hpz", "zeropp", ...).
#include "fuzz/fuzz_common.hpp"
#include "sim/strategy/strategy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const zerosim::Strategy s =
        zerosim::parse_strategy(std::string(zerosim::fuzz::as_text(data, size)));
    (void)s.name();
  });
  return 0;
}
