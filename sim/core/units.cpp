#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"

namespace zerosim {

std::uint64_t parse_bytes(std::string_view text, const std::string& what) {
  const auto bad = [&](const std::string& why) {
    return flag_error(what,
                      fmt::format("'{}' is not a byte size ({}); use e.g. 4096, 8K, 512MiB, 1GiB",
                                  std::string(text), why));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) throw bad("it must start with digits");
  if (i > 18) throw bad("too large");
  std::uint64_t value = std::stoull(std::string(text.substr(0, i)));
  std::string suffix(text.substr(i));
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::uint64_t mult = 1;
  if (suffix.empty() || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "KIB")
    mult = kKiB;
  else if (suffix == "M" || suffix == "MIB")
    mult = kMiB;
  else if (suffix == "G" || suffix == "GIB")
    mult = kGiB;
  else if (suffix == "KB")
    mult = 1000;
  else if (suffix == "MB")
    mult = 1000ULL * 1000;
  else if (suffix == "GB")
    mult = 1000ULL * 1000 * 1000;
  else
    throw bad("unknown suffix '" + std::string(text.substr(i)) + "'");
  if (value == 0) throw bad("it must be positive");
  if (value > std::numeric_limits<std::uint64_t>::max() / mult) throw bad("too large");
  return value * mult;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string format_time(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

}  // namespace zerosim
