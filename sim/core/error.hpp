// Errors: library code throws; only main() decides the exit code.
// InputError = bad input (exit 2). Its message always names where (file), what (JSON path or flag)
// and the rule that was broken, so a user can fix the input without reading code.
#pragma once
#include <stdexcept>
#include <string>

namespace zerosim {

class InputError : public std::runtime_error {
 public:
  // file: path or "<command line>"; path: JSON path like "/links/3/gbps" or a flag like "--nodes".
  InputError(const std::string& file, const std::string& path, const std::string& rule);
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const std::string& rule() const { return rule_; }

 private:
  std::string file_, path_, rule_;
};

// OutputError = the input was fine but writing a result failed (disk full, I/O error): exit 1. Its
// message names the path and the operating system's error text.
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& path, const std::string& what);
};

// Shorthand for command-line flag errors.
InputError flag_error(const std::string& flag, const std::string& rule);

}  // namespace zerosim
