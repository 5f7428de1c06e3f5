// Fuzzes calibration measurement files (JSON lines read by `zerosim calibrate fit`).
#include "calibrate/fit/measurements.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(zerosim::fuzz::as_text(data, size));
  zerosim::fuzz::expect_input_error_only([&] {
    zerosim::calib::Measurements m;
    zerosim::calib::parse_measurements_text(text, "fuzz-measurements.jsonl", m);
  });
  return 0;
}
