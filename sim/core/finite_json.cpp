#include "sim/core/finite_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace zerosim {

namespace {

bool find(const nlohmann::json& j, std::string& pointer) {
  if (j.is_number_float()) return !std::isfinite(j.get<double>());
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      const std::size_t mark = pointer.size();
      pointer += "/" + key;
      if (find(value, pointer)) return true;
      pointer.resize(mark);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::size_t mark = pointer.size();
      pointer += "/" + std::to_string(i);
      if (find(j[i], pointer)) return true;
      pointer.resize(mark);
    }
  }
  return false;
}

}  // namespace

std::string first_non_finite(const nlohmann::json& j) {
  std::string pointer;
  if (!find(j, pointer)) return "";
  return pointer.empty() ? "/" : pointer;
}

void require_finite_result(const nlohmann::json& j, const std::string& what) {
  const std::string at = first_non_finite(j);
  if (!at.empty())
    throw std::runtime_error(fmt::format(
        "{}: the number at {} is not finite (the inputs are outside what the model can price); "
        "nothing was written",
        what, at));
}

}  // namespace zerosim
