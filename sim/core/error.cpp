#include "sim/core/error.hpp"

#include <fmt/format.h>

namespace zerosim {

InputError::InputError(std::string file, std::string path, std::string rule)
    : std::runtime_error(fmt::format("{}: {}: {}", file, path.empty() ? "/" : path, rule)),
      file_(std::move(file)),
      path_(std::move(path)),
      rule_(std::move(rule)) {}

OutputError::OutputError(const std::string& path, const std::string& what)
    : std::runtime_error(fmt::format("{}: {}", path, what)) {}

InputError flag_error(const std::string& flag, const std::string& rule) {
  return InputError("<command line>", flag, rule);
}

}  // namespace zerosim
