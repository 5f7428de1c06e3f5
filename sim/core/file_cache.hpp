// FileCache: the input files simulate() reads (cluster, model and cost-profile JSON, the profile
// folder's listing), kept with what was parsed from them. Sweeps and planners simulate thousands of
// scenarios that read the same few files; reading and parsing them dominated small scenarios.
//
// An entry is served only while the file is known to be unchanged, which is checked on every
// access (no time window), in one of two ways:
// - plain: stat() shows the same file (device, inode, size, mtime, ctime) as when it was read, and
//   its last change was more than two seconds older than that read ("settled"), so that a later
//   write cannot carry the same stamp even on a filesystem with coarse timestamps; an unsettled
//   file is read again and compared.
// - watched (the fast path, equal to the plain one): the kernel reports every change (inotify) to
//   the file and to each folder on its path, watched from before the read. No change reported since
//   the last validation means unchanged, whatever the timestamps. Within a Round (one simulate()
//   call) the reports are collected once, at its start, instead of at every access (a system call
//   each); a call then sees the files as they were when it started, or later. Paths that cannot be
//   watched (relative or through a symbolic link, remote filesystems, no inotify) use the plain
//   way.
// Unchanged bytes keep their pointer, so memos keyed by content compare pointers first. A cache
// belongs to one SimContext and is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
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

class FileCache {
 public:
  // watch false: the plain check only (stat() on every access).
  explicit FileCache(bool watch = true);
  ~FileCache();
  FileCache(const FileCache&) = delete;
  FileCache& operator=(const FileCache&) = delete;

  // The bytes of a regular file, shared. nullptr when it is not a readable regular file.
  std::shared_ptr<const std::string> bytes(const std::string& path);

  // The regular files named *.json in a folder (full paths, sorted, as std::filesystem's iterator
  // with extension() == ".json" finds them). Empty when the folder cannot be read.
  std::shared_ptr<const std::vector<std::string>> json_files_in(const std::string& dir);

  // parse(text) -> T for the file's current bytes, parsed once per distinct content. nullptr when
  // the file is not a readable regular file (the caller's uncached loader reports the error).
  // Parse errors are not cached: the parser throws again next time.
  template <class T, class Parse>
  std::shared_ptr<const T> parsed(const std::string& path, Parse&& parse) {
    std::shared_ptr<const std::string> text = bytes(path);
    if (!text) return nullptr;
    auto& of_type = parsed_[typeid(T)];
    auto it = of_type.find(path);
    if (it != of_type.end() && (it->second.text == text || *it->second.text == *text))
      return std::static_pointer_cast<const T>(it->second.value);
    auto value = std::make_shared<const T>(parse(*text));
    if (of_type.size() >= kMaxEntries) of_type.clear();  // generated files must not pile up
    of_type.insert_or_assign(path, Parsed{std::move(text), value});
    return value;
  }

  // While a Round is open, the kernel's change reports are collected once, when it opens.
  class Round {
   public:
    explicit Round(FileCache& cache);
    ~Round();
    Round(const Round&) = delete;
    Round& operator=(const Round&) = delete;

   private:
    FileCache& cache_;
  };

 private:
  struct Entry;
  struct Watches;
  struct Parsed {
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const void> value;
  };
  static constexpr std::size_t kMaxEntries = 64;

  // The entry of `path` when it is known unchanged; else null (the caller reads it again).
  Entry* fresh(std::map<std::string, Entry>& entries, const std::string& path, bool folder);
  // Watches `path` and its folders before it is read; false when it cannot be watched.
  bool watch(const std::string& path, bool folder);

  std::map<std::string, Entry> files_, dirs_;
  std::map<std::type_index, std::map<std::string, Parsed>> parsed_;  // by type, then path
  std::unique_ptr<Watches> watches_;                                 // null: plain checks only
  int rounds_ = 0;                                                   // open Rounds
};

}  // namespace zerosim
