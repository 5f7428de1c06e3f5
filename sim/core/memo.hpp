// File memos for simulate()'s inputs. Sweeps and benchmarks simulate thousands of scenarios that
// read the same few JSON files (cost profiles, model presets, cluster presets) and list the same
// profile directory; reading, comparing and parsing them dominated small scenarios.
//
// file_bytes(path) serves a file's bytes from a per-process cache while one stat() shows the same
// file (device, inode, size, mtime, ctime) as when it was read, provided its last change was more
// than two seconds older than that read ("settled"): any later write then sets a ctime the cache
// has not seen, even with coarse filesystem timestamps. A settled file whose stamp was confirmed
// less than 20 ms ago is served without another stat(): a change to it is seen by every call that
// starts 20 ms or more after the change (a stat() costs about 1 us, and a planner scenario reads
// seven files in 100 us). Files changed within the last two seconds are read and compared on
// every call. FileMemo parses
// each distinct content once. Both are thread-safe (sweeps run scenarios on every core); parse
// errors are not cached (the parser throws again next time).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace zerosim {

// What stat() says of a file, as far as a change of its contents shows in it.
struct FileStamp {
  std::uint64_t dev = 0, ino = 0;
  std::int64_t size = 0, mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
// True when the file's last change (mtime, ctime) lies more than two seconds before `read_ns`, the
// realtime clock in ns taken before the file was read.
bool settled(const FileStamp& s, std::int64_t read_ns);

// The bytes of a regular file, shared: the same pointer while the file is unchanged (see above), so
// memos keyed by content compare pointers first. nullptr when it is not a readable regular file.
std::shared_ptr<const std::string> file_bytes(const std::string& path);

// The regular files named *.json in a directory (full paths, sorted, as std::filesystem's iterator
// with extension() == ".json" finds them), cached while the directory's stamp is unchanged and
// settled, and re-checked, as above (adding, removing or renaming an entry changes its mtime).
// Empty when the directory cannot be read.
std::vector<std::string> json_files_in(const std::string& dir);

template <class T>
class FileMemo {
 public:
  // parse(text) -> T, from the bytes read here (so key and value always agree). nullptr when the
  // file is not a readable regular file: the caller's uncached loader then reports the error.
  template <class Parse>
  std::shared_ptr<const T> get(const std::string& path, Parse&& parse) {
    std::shared_ptr<const std::string> text = file_bytes(path);
    if (!text) return nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = memo_.find(path);
      if (it != memo_.end() && (it->second.first == text || *it->second.first == *text))
        return it->second.second;
    }
    auto value = std::make_shared<const T>(parse(*text));
    std::lock_guard<std::mutex> lock(mu_);
    if (memo_.size() >= kMaxEntries) memo_.clear();  // bounded: generated files must not pile up
    memo_.insert_or_assign(path, std::pair(std::move(text), value));
    return value;
  }

 private:
  static constexpr std::size_t kMaxEntries = 64;
  std::mutex mu_;
  std::map<std::string, std::pair<std::shared_ptr<const std::string>, std::shared_ptr<const T>>>
      memo_;  // by path
};

}  // namespace zerosim
