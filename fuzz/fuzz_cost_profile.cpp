// Fuzzes cost profiles (parse_cost_profile); an accepted profile must also serialize back.
#include "fuzz/fuzz_common.hpp"
#include "sim/profile/cost_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const auto j =
        zerosim::parse_json_text(zerosim::fuzz::as_text(data, size), "fuzz-profile.json");
    const zerosim::CostProfile p = zerosim::parse_cost_profile(j, "fuzz-profile.json");
    (void)zerosim::to_json(p).dump();
    (void)p.gemm_efficiency_at(1e9);
  });
  return 0;
}
