// Closed choices and their name tables (sim/core/choice.hpp): every name parses to its value and
// prints back, unknown text parses to nothing, and the scenario's enums list their flags' names.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/core/choice.hpp"
#include "sim/net/network_tier.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/transformer.hpp"

using namespace zerosim;

namespace {

// Each name of E round-trips, the names are distinct, and a near miss is refused.
template <Choice E>
void check_round_trip() {
  const std::vector<std::string> names = choice_names<E>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const std::optional<E> v = parse_choice<E>(names[i]);
    REQUIRE(v.has_value());
    CHECK(choice_name(*v) == names[i]);
    for (std::size_t j = 0; j < i; ++j) CHECK(names[j] != names[i]);
    CHECK_FALSE(parse_choice<E>(names[i] + "x").has_value());
  }
  CHECK_FALSE(parse_choice<E>("").has_value());
}

}  // namespace

TEST_CASE("the scenario's choices: names as the flags spell them, round-tripping") {
  CHECK(choice_names<NetworkTier>() == std::vector<std::string>{"flow", "analytic"});
  CHECK(choice_names<AttentionChoice>() == std::vector<std::string>{"auto", "flash", "eager"});
  CHECK(choice_names<BackwardPrefetch>() == std::vector<std::string>{"pre", "post", "none"});
  CHECK(choice_names<FsdpDtype>() == std::vector<std::string>{"auto", "bf16", "fp16", "fp32"});
  check_round_trip<NetworkTier>();
  check_round_trip<AttentionChoice>();
  check_round_trip<BackwardPrefetch>();
  check_round_trip<FsdpDtype>();
  CHECK(parse_choice<NetworkTier>("analytic") == NetworkTier::Analytic);
  CHECK(choice_name(FsdpDtype::Fp32) == "fp32");
  // Parsing is exact: no case folding, no prefixes.
  CHECK_FALSE(parse_choice<NetworkTier>("Flow").has_value());
  CHECK_FALSE(parse_choice<NetworkTier>("ana").has_value());
}
