// FileMemo: parses an input file (cost profile, model preset) once per distinct content per
// process. Sweeps and benchmarks simulate thousands of scenarios that read the same few JSON files;
// parsing them dominated small scenarios. The file is read on every call and compared with the
// bytes the memoized value was parsed from, so a file rewritten between two calls is parsed again:
// the memo can never return a stale result. Thread-safe (sweeps run scenarios on every core); parse
// errors are not cached (the parser throws again next time).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace zerosim {

// The bytes of a regular file (open, fstat, read: no stream machinery), or nullopt when it is not
// a readable regular file.
std::optional<std::string> read_regular_file(const std::string& path);

template <class T>
class FileMemo {
 public:
  // parse(text) -> T, from the bytes read here (so key and value always agree). nullptr when the
  // file is not a readable regular file: the caller's uncached loader then reports the error.
  template <class Parse>
  std::shared_ptr<const T> get(const std::string& path, Parse&& parse) {
    std::optional<std::string> text = read_regular_file(path);
    if (!text) return nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = memo_.find(path);
      if (it != memo_.end() && it->second.first == *text) return it->second.second;
    }
    auto value = std::make_shared<const T>(parse(*text));
    std::lock_guard<std::mutex> lock(mu_);
    if (memo_.size() >= kMaxEntries) memo_.clear();  // bounded: generated files must not pile up
    memo_.insert_or_assign(path, std::pair(std::move(*text), value));
    return value;
  }

 private:
  static constexpr std::size_t kMaxEntries = 64;
  std::mutex mu_;
  std::map<std::string, std::pair<std::string, std::shared_ptr<const T>>> memo_;  // by path
};

}  // namespace zerosim
