// Every number zerosim writes is finite: nlohmann::json writes NaN and infinities as null, which
// no reader of zerosim's results (report, compare, --resume) accepts. Commands check a result
// before writing it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace zerosim {

// The JSON pointer ("/breakdown/compute_s") of the first number in `j` that is not finite, or
// "" when every number is finite.
std::string first_non_finite(const nlohmann::json& j);

// Throws std::runtime_error (exit 1) naming `what` and the pointer when a number is not finite.
void require_finite_result(const nlohmann::json& j, const std::string& what);

}  // namespace zerosim
