// finite_range: the one validator of every floating-point flag. NaN and infinities are refused (a
// plain CLI::Range lets NaN through), and the message names the flag.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "sim/cli/validators.hpp"

using zerosim::cli::finite_range;

namespace {

// The parse error of `--rate value`, or "" when it is accepted.
std::string parse_error(const std::string& value) {
  CLI::App app;
  double rate = 0;
  app.add_option("--rate", rate)->check(finite_range(1e-3, 1e6));
  std::vector<std::string> args = {value, "--rate"};  // CLI11 parses the vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("finite_range accepts finite numbers in range") {
  CHECK(parse_error("100") == "");
  CHECK(parse_error("1e-3") == "");
  CHECK(parse_error("1e6") == "");
}

TEST_CASE("finite_range refuses NaN, infinities and out-of-range numbers, naming the flag") {
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity"}) {
    const std::string e = parse_error(bad);
    INFO(bad << ": " << e);
    CHECK(e.find("--rate") != std::string::npos);
    CHECK(e.find("finite") != std::string::npos);
  }
  CHECK(parse_error("2e6").find("between") != std::string::npos);
  CHECK(parse_error("0").find("between") != std::string::npos);
  CHECK(parse_error("fast").find("not a number") != std::string::npos);
}
