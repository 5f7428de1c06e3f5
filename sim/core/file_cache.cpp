// FileCache: see file_cache.hpp.
#include "sim/core/file_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include "sim/core/input_file.hpp"

namespace zerosim {

namespace {

// Two seconds: more than the coarsest timestamps a filesystem keeps (FAT's 2 s; Linux-native ones
// keep the kernel's coarse clock, a few ms), so a later write cannot get the cached change time.
constexpr std::int64_t kSettleNs = 2'000'000'000;

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

// Filesystems whose every change goes through this kernel, so inotify reports it (not NFS, SMB,
// FUSE, 9p: a change made on another machine or by a daemon is not reported there).
bool local_filesystem(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return false;
  constexpr std::array<unsigned long, 8> kLocal{
      0xEF53,      // ext2/3/4
      0x58465342,  // xfs
      0x9123683E,  // btrfs
      0x01021994,  // tmpfs
      0x794C7630,  // overlayfs
      0xF2F52010,  // f2fs
      0x2FC12FC1,  // zfs
      0x858458F6,  // ramfs
  };
  const auto type = static_cast<unsigned long>(fs.f_type);
  return std::find(kLocal.begin(), kLocal.end(), type) != kLocal.end();
}

// An absolute path without ".", ".." or empty components that names no symbolic link on its way:
// the folders a watch covers are then exactly the path's prefixes.
bool canonical(const std::string& path) {
  if (path.empty() || path.front() != '/') return false;
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr && path == buf;
}

// Each listing entry's name ending in ".json" (its last dot not first, as extension() finds it).
std::optional<std::vector<std::string>> list_json(const std::string& dir, struct stat& st) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  if (::fstat(dirfd(d), &st) != 0) {
    closedir(d);
    return std::nullopt;
  }
  std::vector<std::string> paths;
  while (const dirent* e = readdir(d)) {
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
  return paths;
}

}  // namespace

bool settled(const FileStamp& s, std::int64_t read_ns) {
  return std::max(s.mtime_ns, s.ctime_ns) < read_ns - kSettleNs;
}

struct FileCache::Entry {
  FileStamp stamp;
  bool settled = false;       // when read: an equal stamp then means equal contents
  bool watched = false;       // watched from before the read
  std::uint64_t changes = 0;  // Watches::changes when last validated
  std::shared_ptr<const void> value;
};

// The inotify instance and what each watch is for. `changes` counts the reports that concern a
// cached path: any report raises it, and every watched entry validated before is read again.
struct FileCache::Watches {
  int fd = -1;
  std::uint64_t changes = 0;
  struct Watch {
    bool any = false;             // the cached file or listed folder itself
    std::set<std::string> names;  // a folder on the way: the entries that lead to cached paths
  };
  std::map<int, Watch> of;

  Watches() : fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}
  ~Watches() {
    if (fd >= 0) ::close(fd);
  }
  Watches(const Watches&) = delete;
  Watches& operator=(const Watches&) = delete;

  // Reads every pending report (one system call when there are none).
  void collect() {
    alignas(inotify_event) char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return;  // EAGAIN: nothing pending
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        const auto it = of.find(e->wd);
        const bool relevant = (e->mask & IN_Q_OVERFLOW) || it == of.end() || it->second.any ||
                              e->len == 0 || it->second.names.count(e->name) > 0;
        if (relevant) ++changes;
        if (e->mask & IN_IGNORED) of.erase(e->wd);  // the number may be given to a new watch
      }
    }
  }

  bool add(const std::string& path, std::uint32_t mask, bool any, const std::string& name) {
    const int wd = ::inotify_add_watch(fd, path.c_str(), mask | IN_MASK_ADD);
    if (wd < 0) return false;
    Watch& w = of[wd];
    w.any = w.any || any;
    if (!name.empty()) w.names.insert(name);
    return true;
  }
};

FileCache::FileCache(bool watch) {
  if (!watch) return;
  watches_ = std::make_unique<Watches>();
  if (watches_->fd < 0) watches_.reset();
}

FileCache::~FileCache() = default;

FileCache::Round::Round(FileCache& cache) : cache_(cache) {
  if (cache_.rounds_++ == 0 && cache_.watches_) cache_.watches_->collect();
}

FileCache::Round::~Round() { --cache_.rounds_; }

bool FileCache::watch(const std::string& path, bool folder) {
  if (!watches_ || !canonical(path) || !local_filesystem(path)) return false;
  constexpr std::uint32_t kSelf = IN_MOVE_SELF | IN_DELETE_SELF;
  constexpr std::uint32_t kEntries = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
  if (!watches_->add(
          path,
          folder ? kEntries | kSelf | IN_ONLYDIR : IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | kSelf,
          true, ""))
    return false;
  // Each folder on the way, for its entry that leads here (renamed, removed or replaced).
  std::size_t next = path.size();
  for (std::size_t p = path.rfind('/');; p = path.rfind('/', p - 1)) {
    const std::string name = path.substr(p + 1, next - p - 1);
    if (!watches_->add(p == 0 ? "/" : path.substr(0, p), kEntries | kSelf | IN_ONLYDIR, false,
                       name))
      return false;
    if (p == 0) return true;
    next = p;
  }
}

FileCache::Entry* FileCache::fresh(std::map<std::string, Entry>& entries, const std::string& path,
                                   bool folder) {
  auto it = entries.find(path);
  if (it == entries.end()) return nullptr;
  Entry& e = it->second;
  if (e.watched) {
    if (rounds_ == 0) watches_->collect();
    if (e.changes == watches_->changes) return &e;
  }
  // The plain check (also after a report: most are about something else on the way).
  if (!e.settled) return nullptr;
  const bool watched = e.watched && watch(path, folder);
  const std::uint64_t changes = watched ? watches_->changes : 0;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !(file_stamp(st) == e.stamp)) return nullptr;
  e.watched = watched;
  e.changes = changes;
  return &e;
}

std::shared_ptr<const std::string> FileCache::bytes(const std::string& path) {
  if (Entry* e = fresh(files_, path, false))
    return std::static_pointer_cast<const std::string>(e->value);
  // Watched before it is read: a change during or after the read is reported.
  const bool watched = watch(path, false);
  const std::uint64_t changes = watches_ ? watches_->changes : 0;
  const std::int64_t now = realtime_ns();
  std::string why;
  struct stat st {};
  std::optional<std::string> text = read_regular_file(path, why, &st);
  if (!text) return nullptr;
  // The stamp is fstat's, taken before the read: a write during the read changes it later.
  const FileStamp stamp = file_stamp(st);
  auto value = std::make_shared<const std::string>(std::move(*text));
  auto it = files_.find(path);
  if (it != files_.end() &&
      *std::static_pointer_cast<const std::string>(it->second.value) == *value)
    value = std::static_pointer_cast<const std::string>(it->second.value);  // same pointer
  if (it == files_.end() && files_.size() >= kMaxEntries) files_.clear();
  files_.insert_or_assign(path, Entry{stamp, settled(stamp, now), watched, changes, value});
  return value;
}

std::shared_ptr<const std::vector<std::string>> FileCache::json_files_in(const std::string& dir) {
  using List = std::vector<std::string>;
  if (Entry* e = fresh(dirs_, dir, true)) return std::static_pointer_cast<const List>(e->value);
  const bool watched = watch(dir, true);
  const std::uint64_t changes = watches_ ? watches_->changes : 0;
  const std::int64_t now = realtime_ns();
  struct stat st {};
  std::optional<List> paths = list_json(dir, st);
  if (!paths) return std::make_shared<const List>();
  const FileStamp stamp = file_stamp(st);
  auto value = std::make_shared<const List>(std::move(*paths));
  if (dirs_.size() >= kMaxEntries) dirs_.clear();
  dirs_.insert_or_assign(dir, Entry{stamp, settled(stamp, now), watched, changes, value});
  return value;
}

}  // namespace zerosim
