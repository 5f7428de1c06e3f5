// FileMemo: parses an input file (cost profile, model preset) once per distinct content per
// process. Sweeps and benchmarks simulate thousands of scenarios that read the same few JSON files;
// parsing them dominated small scenarios. The key is the path AND the file's bytes, so a file
// rewritten between two calls is parsed again: the memo can never return a stale result.
// Thread-safe (sweeps run scenarios on every core); parse errors are not cached (the parser throws
// again next time).
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace zerosim {

template <class T>
class FileMemo {
 public:
  // parse(text) -> T, from the bytes read here (so key and value always agree). nullopt when the
  // file is not a readable regular file: the caller's uncached loader then reports the error.
  template <class Parse>
  std::optional<T> get(const std::string& path, Parse&& parse) {
    std::optional<std::string> text = read(path);
    if (!text) return std::nullopt;
    std::string key = path;
    key.push_back('\0');
    key += *text;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = memo_.find(key);
      if (it != memo_.end()) return it->second;
    }
    T value = parse(*text);
    std::lock_guard<std::mutex> lock(mu_);
    if (memo_.size() >= kMaxEntries) memo_.clear();  // bounded: generated files must not pile up
    memo_.emplace(std::move(key), value);
    return value;
  }

 private:
  static constexpr std::size_t kMaxEntries = 64;
  static std::optional<std::string> read(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string s{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) return std::nullopt;
    return s;
  }
  std::mutex mu_;
  std::map<std::string, T> memo_;
};

}  // namespace zerosim
