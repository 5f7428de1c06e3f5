// Strict JSON reading and atomic file writing shared by every parser and writer.
// Parsers reject unknown keys and wrong types with InputError(file, JSON path, rule): no silent
// defaults.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace zerosim {

class FileCache;  // sim/core/file_cache.hpp

using json = nlohmann::json;
// A JSON object that keeps its keys in insertion order: documents whose key order is specified
// (a ds_config in DeepSpeed's documented order).
using ordered_json = nlohmann::ordered_json;

// Reads and parses a JSON file; a missing file or a syntax error is an InputError naming the file
// (and the byte offset of the syntax error).
json load_json_file(const std::string& path);
// Parses JSON text that came from `file` (used by fuzzers and tests).
json parse_json_text(std::string_view text, const std::string& file);

// Compact JSON text (json::dump()) as json::dump(1) writes the same value, with every line
// indented by `depth` more spaces, appended to `out`: the text is re-indented without parsing it.
// `compact` must be nlohmann's compact output of one value.
void append_indented_json(std::string_view compact, std::size_t depth, std::string& out);

// A cursor into a JSON document that knows its file and path, for error messages.
class JsonReader {
 public:
  JsonReader(const json& value, std::string file, std::string path = "");
  const json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // Throws unless value is an object whose keys are all in `allowed`.
  void require_object(std::initializer_list<std::string_view> allowed) const;
  void require_object(const std::vector<std::string_view>& allowed) const;
  bool has(std::string_view key) const;
  JsonReader at(std::string_view key) const;  // throws "missing required key"
  JsonReader at(std::size_t index) const;     // for arrays
  std::size_t array_size() const;             // throws unless array

  std::string get_string() const;
  double get_number() const;       // finite number
  double get_positive() const;     // finite and > 0
  double get_nonnegative() const;  // finite and >= 0
  std::int64_t get_int() const;    // integral number
  std::int64_t get_int_at_least(std::int64_t min) const;
  int get_int32_at_least(std::int64_t min) const;  // also at most INT_MAX: no silent wrap to int
  bool get_bool() const;

  // Optional keys with defaults that are documented at the call site.
  std::string string_or(std::string_view key, std::string fallback) const;
  double number_or(std::string_view key, double fallback) const;
  std::int64_t int_or(std::string_view key, std::int64_t fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;

  [[noreturn]] void fail(const std::string& rule) const;

 private:
  const json* value_;
  std::string file_, path_;
};

// Writes `content` to standard output when `path` is "-" (a file named so is "./-"); otherwise to
// `path` atomically and durably: a temporary file in the same folder, fsynced,
// renamed over `path`, then the folder fsynced (a crash leaves the old file or the new one, whole).
// A symlink at `path` is written through (its target replaced, the link kept). A bad path (missing
// or unwritable folder, a folder at the path) is an InputError; a failed write (disk full, I/O
// error) an OutputError with the OS error. No partial file is left behind.
void write_file_atomic(const std::string& path, std::string_view content);

// Writes all of `content` to the file descriptor, retrying short writes and EINTR; false (errno
// set) on any other error, e.g. ENOSPC.
bool write_all(int fd, std::string_view content);

// A file written atomically in pieces, with write_file_atomic's guarantees and errors: the
// constructor checks the path and creates the temporary file, write() appends (buffered),
// commit() syncs it and renames it into place. Destroyed without commit(), the temporary file is
// removed and `path` is untouched.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(std::string_view bytes);
  void commit();

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  [[noreturn]] void fail(int err);  // removes the temporary file, throws OutputError
  std::string path_, target_, dir_, tmp_, buffer_;
  int fd_ = -1;
};

// Resolves a shipped data file: `dir` is "topologies", "workloads" or "calibrate/profiles";
// `name` is a preset name ("dgx-h100") or a path. Returns the path of an existing file or throws
// InputError listing the presets available. `files`: a readable file is found in this cache (no
// other system call while it is unchanged); null: looked up afresh.
std::string resolve_data_file(const std::string& dir, const std::string& name,
                              const std::string& flag, FileCache* files = nullptr);

}  // namespace zerosim
