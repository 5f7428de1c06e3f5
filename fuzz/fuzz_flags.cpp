// Fuzzes command-line values: byte sizes ("1GiB") and every sweepable flag's list syntax and value
// check. The first input byte picks the flag, the rest is its text.
#include "fuzz/fuzz_common.hpp"
#include "sim/core/units.hpp"
#include "sim/sweep/sweep_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& flags = zerosim::sweep::sweep_flags();
  const std::size_t pick = data[0] % (flags.size() + 1);
  const std::string text(zerosim::fuzz::as_text(data + 1, size - 1));
  zerosim::fuzz::expect_input_error_only([&] {
    if (pick == flags.size()) {
      (void)zerosim::parse_bytes(text, "--bytes");
      return;
    }
    zerosim::Scenario s;
    for (const auto& v : zerosim::sweep::split_list(text, flags[pick]))
      zerosim::sweep::apply_flag(s, flags[pick], v);
    (void)zerosim::sweep::scenario_to_json(s).dump();
  });
  return 0;
}
