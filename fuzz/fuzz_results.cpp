// Fuzzes results files (sweep, plan, bare array or one simulate result) as `report`/`compare` read
// them.
#include "fuzz/fuzz_common.hpp"
#include "sim/report/result_view.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const auto j =
        zerosim::parse_json_text(zerosim::fuzz::as_text(data, size), "fuzz-results.json");
    for (const auto& v : zerosim::report::read_results(j, "fuzz-results.json")) (void)v.label();
  });
  return 0;
}
