// Fuzzes the nccl-tests log importer (text and -J JSON). The first byte picks the collective and
// the column set (out-of-place / in-place), the rest is the log.
#include "calibrate/fit/nccl_tests.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* kOps[] = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                               "send_recv"};
  zerosim::calib::NcclTestsOptions opt;
  opt.op = kOps[data[0] % 5];
  opt.in_place = (data[0] / 5) % 2 == 1;
  opt.ranks =
      (data[0] / 10) % 3 == 1 ? 8 : 0;  // sometimes given on the command line, else from the log
  const std::string text(zerosim::fuzz::as_text(data + 1, size - 1));
  zerosim::fuzz::expect_input_error_only(
      [&] { (void)zerosim::calib::parse_nccl_tests(text, "fuzz-nccl.log", opt); });
  return 0;
}
