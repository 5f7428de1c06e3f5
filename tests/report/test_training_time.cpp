// Time to train (sim/report/training_time.hpp): token counts with decimal suffixes, days and
// GPU-hours as closed forms of tokens/s, and the report sections.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/report/html.hpp"
#include "sim/report/tables.hpp"
#include "sim/report/training_time.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using namespace zerosim::report;

TEST_CASE("token counts take decimal suffixes and must be positive and finite") {
  CHECK(parse_token_count("300B", "--train-tokens") == 300e9);
  CHECK(parse_token_count("1.5T", "--train-tokens") == 1.5e12);
  CHECK(parse_token_count("2e12", "--train-tokens") == 2e12);
  CHECK(parse_token_count("750M", "--train-tokens") == 750e6);
  CHECK(parse_token_count("4096", "--train-tokens") == 4096);
  for (const char* bad : {"", "B300", "3Q", "0", "1e400", "nan", "-5B", "1e17"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_token_count(bad, "--train-tokens"), InputError);
  }
  CHECK(format_token_count(300e9) == "300B");
  CHECK(format_token_count(1.5e12) == "1.5T");
}

TEST_CASE("days and GPU-hours are the budget over tokens/s") {
  ResultView r;
  r.gpus = 384;
  r.tokens_per_s = 1e6;
  const TrainingTime t = training_time(r, 300e9);
  CHECK(t.days == zerosim::testing::Approx(300e3 / 86400));
  CHECK(t.gpu_hours == zerosim::testing::Approx(300e3 / 3600 * 384));
  r.tokens_per_s = 0;  // a result without throughput gives no time, not infinity
  CHECK(training_time(r, 300e9).days == 0);
}

TEST_CASE("reports add the section only when asked") {
  ResultView r;
  r.model = "gpt-18b";
  r.gpus = 8;
  r.nodes = 1;
  r.strategy = "zero3";
  r.tokens_per_s = 86400;  // one day per 86400 x 86400 tokens
  const std::vector<ResultView> rs = {r};
  CHECK(render_markdown(rs, "x.json").find("Time to train") == std::string::npos);
  const std::string md = render_markdown(rs, "x.json", {86400.0 * 86400, {}});
  CHECK(md.find("| 86400 | 1.0 | 192 |\n") != std::string::npos);
  // Priced: 192 GPU-hours at 2.5 each, the price every GPU has.
  GpuPrices every;
  every.every = 2.5;
  const std::string priced = render_markdown(rs, "x.json", {86400.0 * 86400, every});
  CHECK(priced.find("| price per GPU-hour | cost |") != std::string::npos);
  CHECK(priced.find("| 86400 | 1.0 | 192 | 2.5 (every GPU) | 480 |") != std::string::npos);
  CHECK(render_html(rs, "x.json", {1e9, {}}).find("<h2>Time to train</h2>") != std::string::npos);
}
