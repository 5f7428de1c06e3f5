// TerminalTable: the axis columns and the metric columns, each padded to its widest cell (text
// left, numbers right), with the values formatted from the result.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim/report/terminal_table.hpp"

using zerosim::report::ResultView;
using zerosim::report::TerminalTable;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

ResultView result(double step, double tokens, double peak_gib, bool fits) {
  ResultView r;
  r.step_time_s = step;
  r.tokens_per_s = tokens;
  r.tflops_per_gpu = 123.45;
  r.mfu = 0.25;
  r.peak_bytes_per_gpu = peak_gib * 1024 * 1024 * 1024;
  r.capacity_bytes = 80.0 * 1024 * 1024 * 1024;
  r.fits = fits;
  return r;
}

}  // namespace

TEST_CASE(
    "a row per result: axis values, then step, tokens/s, TFLOPS, MFU, peak / capacity, fits") {
  TerminalTable t({"strategy"});
  t.add({"zero3"}, result(12.3456, 1000.4, 70.25, true));
  t.add({"zero3+qwz+qgz"}, result(1.5, 99999.6, 90.0, false));
  const std::vector<std::string> lines = lines_of(t.render());
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "strategy       step s  tokens/s  TFLOPS/GPU    MFU    peak GiB  fits");
  CHECK(lines[1] == "zero3          12.346      1000       123.5  25.0%  70.25 / 80  yes");
  CHECK(lines[2] == "zero3+qwz+qgz   1.500    100000       123.5  25.0%  90.00 / 80  NO");
}

TEST_CASE("no axis columns and no rows: the header alone") {
  CHECK(TerminalTable({}).render() == "step s  tokens/s  TFLOPS/GPU  MFU  peak GiB  fits\n");
}
