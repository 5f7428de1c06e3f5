// file_bytes, json_files_in: see memo.hpp.
#include "sim/core/memo.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <string_view>

#include "sim/core/input_file.hpp"

namespace zerosim {

namespace {

// Two seconds: more than the coarsest timestamps a filesystem keeps (FAT's 2 s; Linux-native ones
// keep the kernel's coarse clock, a few ms), so a later write cannot get the cached change time.
constexpr std::int64_t kSettleNs = 2'000'000'000;
// A settled entry confirmed by stat() this recently is served without another stat(): a scenario
// reads about seven files, and their stat() calls (about 1 us each) were 7% of a planner scenario.
constexpr std::int64_t kRecheckNs = 20'000'000;
constexpr std::size_t kMaxEntries = 64;

std::int64_t ns_of(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

FileStamp file_stamp(const struct stat& st) {
  return FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::int64_t>(st.st_size), ns_of(st.st_mtim), ns_of(st.st_ctim)};
}

std::int64_t realtime_ns() {
  struct timespec t {};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

// For the re-check interval: a coarse clock (a few ms resolution) is cheap to read, and the
// interval is a few times its resolution.
std::int64_t monotonic_ns() {
  struct timespec t {};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return ns_of(t);
}

// One cache of things read from paths, with the stamp they were read under.
template <class V>
struct StampedCache {
  struct Entry {
    FileStamp stamp;
    bool trusted = false;  // settled when read: an equal stamp means equal contents
    V value;
    std::int64_t confirmed_ns = 0;  // monotonic_ns() before the last stat() that matched
  };
  std::mutex mu;
  std::map<std::string, Entry> entries;

  // The value of a trusted entry confirmed less than kRecheckNs before `now`.
  std::optional<V> recent(const std::string& path, std::int64_t now) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(path);
    if (it == entries.end() || !it->second.trusted || now - it->second.confirmed_ns >= kRecheckNs)
      return std::nullopt;
    return it->second.value;
  }
  // The cached value when `st` (taken after `now`) matches a trusted entry.
  std::optional<V> hit(const std::string& path, const struct stat& st, std::int64_t now) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(path);
    if (it == entries.end() || !it->second.trusted || !(it->second.stamp == file_stamp(st)))
      return std::nullopt;
    it->second.confirmed_ns = now;
    return it->second.value;
  }
  // Stores a value read under `stamp` (taken after `now`); a previous value equal to it is kept
  // (same pointer).
  V store(const std::string& path, const FileStamp& stamp, bool trusted, V value,
          std::int64_t now) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(path);
    if (it != entries.end() && *it->second.value == *value) value = it->second.value;
    if (it == entries.end() && entries.size() >= kMaxEntries) entries.clear();
    entries.insert_or_assign(path, Entry{stamp, trusted, value, now});
    return value;
  }
};

}  // namespace

bool settled(const FileStamp& s, std::int64_t read_ns) {
  return std::max(s.mtime_ns, s.ctime_ns) < read_ns - kSettleNs;
}

std::shared_ptr<const std::string> file_bytes(const std::string& path) {
  static StampedCache<std::shared_ptr<const std::string>> cache;
  const std::int64_t mono = monotonic_ns();
  if (auto v = cache.recent(path, mono)) return *v;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    if (auto v = cache.hit(path, st, mono)) return *v;
  // Read with open, fstat, read (no stream machinery), never blocking on a FIFO: the loader's
  // read_input_file reports what is wrong with a file this cannot read.
  const std::int64_t now = realtime_ns();
  std::string why;
  std::optional<std::string> text = read_regular_file(path, why, &st);
  if (!text) return nullptr;
  // The stamp is fstat's, taken before the read: a write during the read changes it later.
  const FileStamp stamp = file_stamp(st);
  return cache.store(path, stamp, settled(stamp, now),
                     std::make_shared<const std::string>(std::move(*text)), mono);
}

std::vector<std::string> json_files_in(const std::string& dir) {
  using List = std::shared_ptr<const std::vector<std::string>>;
  static StampedCache<List> cache;
  const std::int64_t mono = monotonic_ns();
  if (auto v = cache.recent(dir, mono)) return **v;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};
  if (auto v = cache.hit(dir, st, mono)) return **v;
  const std::int64_t now = realtime_ns();
  DIR* d = opendir(dir.c_str());
  if (!d) return {};
  if (::fstat(dirfd(d), &st) != 0) {
    closedir(d);
    return {};
  }
  std::vector<std::string> paths;
  while (const dirent* e = readdir(d)) {
    // The last dot of the name, not its first character, starts ".json" (as extension()).
    const std::string_view name = e->d_name;
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || name.substr(dot) != ".json") continue;
    std::string path;
    path.reserve(dir.size() + 1 + name.size());
    path.append(dir).append("/").append(name);
    paths.push_back(std::move(path));
  }
  closedir(d);
  std::sort(paths.begin(), paths.end());
  const FileStamp stamp = file_stamp(st);
  return *cache.store(dir, stamp, settled(stamp, now),
                      std::make_shared<const std::vector<std::string>>(std::move(paths)), mono);
}

}  // namespace zerosim
