// first_non_finite / require_finite_result: a result holding NaN or an infinity anywhere (which
// nlohmann::json would write as null) is found, with its JSON pointer, before anything is written.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/core/finite_json.hpp"

using zerosim::first_non_finite;
using json = nlohmann::json;

TEST_CASE("finite results pass; NaN and infinities are found with their JSON pointer") {
  json r = {{"step_time_s", 1.5},
            {"n", 3},
            {"breakdown", {{"compute_s", 0.25}}},
            {"rows", json::array({1.0, 2.0})},
            {"name", "x"}};
  CHECK(first_non_finite(r) == "");
  CHECK_NOTHROW(zerosim::require_finite_result(r, "the result"));

  r["breakdown"]["compute_s"] = std::nan("");
  CHECK(first_non_finite(r) == "/breakdown/compute_s");
  r["breakdown"]["compute_s"] = 0.25;
  r["rows"][1] = std::numeric_limits<double>::infinity();
  CHECK(first_non_finite(r) == "/rows/1");
  try {
    zerosim::require_finite_result(r, "the result");
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("/rows/1") != std::string::npos);
  }
  CHECK(first_non_finite(json(std::nan(""))) == "/");
}
