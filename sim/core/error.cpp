#include "sim/core/error.hpp"

#include <fmt/format.h>

#include "sim/core/utf8.hpp"

namespace zerosim {

namespace {
// A rule lists allowed keys or presets besides what it quotes (each quote capped where it is made).
constexpr std::size_t kMaxRuleBytes = 1024;
}  // namespace

// Every part may quote input (a file name, a JSON key, a value): each is capped and escaped, so a
// message is a few hundred bytes of valid UTF-8 without terminal control characters.
InputError::InputError(const std::string& file, const std::string& path, const std::string& rule)
    : std::runtime_error(""),
      file_(printable(file)),
      path_(printable(path)),
      rule_(printable(rule, kMaxRuleBytes, true)) {
  static_cast<std::runtime_error&>(*this) =
      std::runtime_error(fmt::format("{}: {}: {}", file_, path_.empty() ? "/" : path_, rule_));
}

OutputError::OutputError(const std::string& path, const std::string& what)
    : std::runtime_error(fmt::format("{}: {}", printable(path), what)) {}

InputError flag_error(const std::string& flag, const std::string& rule) {
  return InputError("<command line>", flag, rule);
}

}  // namespace zerosim
