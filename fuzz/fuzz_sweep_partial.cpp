// Fuzzes sweep partial files (JSON lines read by `sweep --resume`) against the default scenario.
#include "fuzz/fuzz_common.hpp"
#include "sim/sweep/run_sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = zerosim::fuzz::write_temp(zerosim::fuzz::as_text(data, size), "partial");
  static const std::vector<zerosim::Scenario> scenarios(2);
  zerosim::fuzz::expect_input_error_only(
      [&] { (void)zerosim::sweep::read_partial(path, scenarios); });
  return 0;
}
