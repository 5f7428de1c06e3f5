#include "sim/core/json_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/closest_match.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/core/utf8.hpp"

namespace zerosim {

namespace fs = std::filesystem;

namespace {

// The text as the parser reads it, recording how many bytes it has consumed, so that a key can be
// located by its byte offset (nlohmann's callbacks carry no position).
class CountingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  CountingIterator() = default;
  CountingIterator(const char* p, const char* begin, std::size_t* consumed)
      : p_(p), begin_(begin), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    *consumed_ = static_cast<std::size_t>(p_ - begin_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }

 private:
  const char* p_ = nullptr;
  const char* begin_ = nullptr;
  std::size_t* consumed_ = nullptr;
};

// Refuses a key given twice in one object (RFC 8259 leaves the meaning open; nlohmann would keep
// the last value silently), naming both occurrences by byte offset. One frame per open container:
// its JSON path, the keys seen with where each ended, and the next array index.
class DuplicateKeyCheck {
 public:
  DuplicateKeyCheck(const std::string& file, const std::size_t& consumed)
      : file_(file), consumed_(consumed) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        frames_.push_back({child_path(), event == E::object_start, {}, {}, 0});
        break;
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        break;
      case E::key: {
        Frame& f = frames_.back();
        f.last_key = parsed.get<std::string>();
        const auto [it, inserted] = f.keys.emplace(f.last_key, consumed_);
        if (!inserted)
          throw InputError(file_, f.path + "/" + f.last_key,
                           fmt::format("duplicate key '{}' (its key ends at byte {}, the first "
                                       "one at byte {}): give each key once per object",
                                       printable(f.last_key), consumed_, it->second));
        break;
      }
      case E::value:
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    std::string path;
    bool object = false;
    std::unordered_map<std::string, std::size_t> keys;
    std::string last_key;
    std::size_t index = 0;
  };
  // The path of a container opening inside the current frame.
  std::string child_path() {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    return f.path + "/" + (f.object ? f.last_key : std::to_string(f.index++));
  }
  const std::string& file_;
  const std::size_t& consumed_;
  std::vector<Frame> frames_;
};

}  // namespace

namespace {

// The characters append_indented_json treats apart: a string's quote and the structure.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (const char c : std::string_view("\"{}[],:")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// Text appended to a string through a cursor into its buffer, grown on demand: a copy or a line
// break is one bounds check and a memcpy, not a string append each.
class Appender {
 public:
  Appender(std::string& out, std::size_t expect) : out_(out), used_(out.size()) {
    out_.resize(used_ + expect);
  }
  ~Appender() { out_.resize(used_); }
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;
  void put(const char* s, std::size_t k) {
    room(k);
    std::memcpy(out_.data() + used_, s, k);
    used_ += k;
  }
  void put(char c) {
    room(1);
    out_[used_++] = c;
  }
  // A line break and k spaces, eight at a time (an indent is a few spaces: a fixed-size copy is
  // cheaper than a call to memset).
  void line(std::size_t k) {
    room(k + 9);
    char* p = out_.data() + used_;
    *p++ = '\n';
    static constexpr std::array<char, 8> kEight = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    for (std::size_t i = 0; i < k; i += 8) std::memcpy(p + i, kEight.data(), kEight.size());
    used_ += k + 1;
  }
  void spaces(std::size_t k) {
    room(k);
    std::memset(out_.data() + used_, ' ', k);
    used_ += k;
  }

 private:
  void room(std::size_t k) {
    if (out_.size() - used_ < k) out_.resize(std::max(out_.size() * 2, used_ + k));
  }
  std::string& out_;
  std::size_t used_;
};

}  // namespace

void append_indented_json(std::string_view compact, std::size_t depth, std::string& out) {
  // dump(1): an object or array opens a line per member at one more space, closes on a line of
  // its own at its depth, and is written "{}" / "[]" when empty; a member's key is followed by
  // ": ". Strings (keys too) are copied as they are, escapes included.
  Appender text(out, compact.size() * 2 + depth);
  text.spaces(depth);
  const auto newline = [&](std::size_t d) { text.line(d); };
  std::size_t d = depth;
  const std::size_t n = compact.size();
  const char* const s = compact.data();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[i];
    switch (c) {
      case '"': {  // to the closing quote: the next quote without a backslash before it
        std::size_t j = i + 1;
        const void* q = std::memchr(s + j, '"', n - j);
        const std::size_t at = q ? static_cast<std::size_t>(static_cast<const char*>(q) - s) : n;
        if (!std::memchr(s + j, '\\', at - j))
          j = at;
        else  // escapes: one character at a time
          while (j < n && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
        text.put(s + i, std::min(j + 1, n) - i);
        i = j;
        break;
      }
      case '{':
      case '[':
        if (i + 1 < n && s[i + 1] == (c == '{' ? '}' : ']')) {
          text.put(s + i, 2);
          ++i;
        } else {
          text.put(c);
          newline(++d);
        }
        break;
      case '}':
      case ']':
        newline(--d);
        text.put(c);
        break;
      case ',':
        text.put(',');
        newline(d);
        break;
      case ':':
        text.put(": ", 2);
        break;
      default: {  // a number or literal: copied up to the next character of the cases above
        std::size_t j = i + 1;
        while (j < n && !kStructural[static_cast<unsigned char>(s[j])]) ++j;
        text.put(s + i, j - i);
        i = j - 1;
      }
    }
  }
}

json parse_json_text(std::string_view text, const std::string& file) {
  try {
    std::size_t consumed = 0;
    const CountingIterator first(text.data(), text.data(), &consumed);
    const CountingIterator last(text.data() + text.size(), text.data(), &consumed);
    return json::parse(first, last, DuplicateKeyCheck(file, consumed));
  } catch (const json::parse_error& e) {
    // e.what() quotes the last token read, which may be megabytes of one unterminated string.
    throw InputError(
        file, "", fmt::format("malformed JSON at byte {}: {}", e.byte, printable(e.what(), 512)));
  } catch (const json::out_of_range& e) {  // a number too large for a double, e.g. 1e400
    throw InputError(file, "", fmt::format("malformed JSON: {}", printable(e.what(), 512)));
  }
}

json load_json_file(const std::string& path) {
  return parse_json_text(read_input_file(path), path);
}

JsonReader::JsonReader(const json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

void JsonReader::fail(const std::string& rule) const { throw InputError(file_, path_, rule); }

void JsonReader::require_object(std::initializer_list<std::string_view> allowed) const {
  require_object(std::vector<std::string_view>(allowed));
}

void JsonReader::require_object(const std::vector<std::string_view>& known) const {
  if (!value_->is_object()) fail(fmt::format("must be an object, not {}", value_->type_name()));
  // Every unknown key at once, each with the closest allowed one: a file with three typos is
  // fixed in one run.
  std::string first, others;
  for (const auto& [key, _] : value_->items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string hint = did_you_mean(key, known);
    if (first.empty())
      first = key;
    else
      others += fmt::format("{}'{}'{}", others.empty() ? "" : ", ", printable(key), hint);
  }
  if (first.empty()) return;
  std::string list;
  for (auto a : known) list += (list.empty() ? "" : ", ") + std::string(a);
  throw InputError(file_, path_ + "/" + first,
                   fmt::format("unknown key '{}'{}{} (allowed: {})", printable(first),
                               did_you_mean(first, known),
                               others.empty() ? "" : "; also unknown here: " + others, list));
}

bool JsonReader::has(std::string_view key) const {
  return value_->is_object() && value_->contains(std::string(key));
}

JsonReader JsonReader::at(std::string_view key) const {
  if (!value_->is_object()) fail(fmt::format("must be an object, not {}", value_->type_name()));
  auto it = value_->find(std::string(key));
  if (it == value_->end()) fail(fmt::format("missing required key '{}'", key));
  return JsonReader(*it, file_, path_ + "/" + std::string(key));
}

JsonReader JsonReader::at(std::size_t index) const {
  if (!value_->is_array()) fail(fmt::format("must be an array, not {}", value_->type_name()));
  if (index >= value_->size()) fail(fmt::format("index {} out of range", index));
  return JsonReader((*value_)[index], file_, path_ + "/" + std::to_string(index));
}

std::size_t JsonReader::array_size() const {
  if (!value_->is_array()) fail(fmt::format("must be an array, not {}", value_->type_name()));
  return value_->size();
}

std::string JsonReader::get_string() const {
  if (!value_->is_string()) fail(fmt::format("must be a string, not {}", value_->type_name()));
  return value_->get<std::string>();
}

double JsonReader::get_number() const {
  if (!value_->is_number()) fail(fmt::format("must be a number, not {}", value_->type_name()));
  double v = value_->get<double>();
  if (!std::isfinite(v)) fail("must be a finite number");
  return v;
}

double JsonReader::get_positive() const {
  double v = get_number();
  if (!(v > 0)) fail(fmt::format("must be positive (got {})", v));
  return v;
}

double JsonReader::get_nonnegative() const {
  double v = get_number();
  if (v < 0) fail(fmt::format("must not be negative (got {})", v));
  return v;
}

std::int64_t JsonReader::get_int() const {
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
      return static_cast<std::int64_t>(v);
  }
  fail(fmt::format("must be an integer, not {}",
                   printable(value_->dump(-1, ' ', false, json::error_handler_t::replace))));
}

std::int64_t JsonReader::get_int_at_least(std::int64_t min) const {
  auto v = get_int();
  if (v < min) fail(fmt::format("must be at least {} (got {})", min, v));
  return v;
}

int JsonReader::get_int32_at_least(std::int64_t min) const {
  const auto v = get_int_at_least(min);
  if (v > std::numeric_limits<int>::max())
    fail(fmt::format("must be at most {} (got {})", std::numeric_limits<int>::max(), v));
  return static_cast<int>(v);
}

bool JsonReader::get_bool() const {
  if (!value_->is_boolean())
    fail(fmt::format("must be true or false, not {}", value_->type_name()));
  return value_->get<bool>();
}

std::string JsonReader::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? at(key).get_string() : std::move(fallback);
}
double JsonReader::number_or(std::string_view key, double fallback) const {
  return has(key) ? at(key).get_number() : fallback;
}
std::int64_t JsonReader::int_or(std::string_view key, std::int64_t fallback) const {
  return has(key) ? at(key).get_int() : fallback;
}
bool JsonReader::bool_or(std::string_view key, bool fallback) const {
  return has(key) ? at(key).get_bool() : fallback;
}

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

namespace {

int fsync_retry(int fd) {
  int rc;
  do rc = ::fsync(fd);
  while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  std::error_code ec;
  // A symlink at the path is written through: its target is replaced, the link stays.
  fs::path target(path);
  if (fs::is_symlink(target, ec)) {
    target = fs::weakly_canonical(target, ec);
    if (ec) throw InputError(path, "", "cannot resolve the symbolic link: " + ec.message());
  }
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw InputError(path, "", "output folder does not exist");
  if (fs::is_directory(target, ec))
    throw InputError(path, "", "output path is a folder, not a file");
  // Renaming over a device or a FIFO would replace it (as root, /dev/null itself).
  if (const std::string rule = non_regular_output_rule(target.string()); !rule.empty())
    throw InputError(path, "", rule);
  target_ = target.string();
  dir_ = dir.string();
  tmp_ = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    const std::string why = fmt::format("cannot create the output file: {}", std::strerror(err));
    // A full disk or a failing device is not the user's input: exit 1, not 2.
    if (err == ENOSPC || err == EDQUOT || err == EIO) throw OutputError(path, why);
    throw InputError(path, "", why);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void AtomicFile::fail(int err) {
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  fs::remove(tmp_, ec);
  throw OutputError(path_, fmt::format("writing the output failed: {}", std::strerror(err)));
}

void AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) throw std::logic_error("AtomicFile written after commit or failure");
  buffer_.append(bytes);
  if (buffer_.size() < kBufferBytes) return;
  errno = 0;
  if (!write_all(fd_, buffer_)) fail(errno != 0 ? errno : EIO);
  buffer_.clear();
}

void AtomicFile::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicFile committed twice or after a failure");
  // fsync before rename: after a crash or power loss the name points at complete data or at the
  // old file, never at an empty one (rename alone orders nothing on ext4/xfs with delayed alloc).
  errno = 0;
  if (!write_all(fd_, buffer_) || fsync_retry(fd_) != 0) fail(errno != 0 ? errno : EIO);
  buffer_.clear();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    std::error_code ec;
    fs::remove(tmp_, ec);
    throw OutputError(path_, fmt::format("writing the output failed: {}", std::strerror(err)));
  }
  std::error_code ec;
  fs::rename(tmp_, target_, ec);
  if (ec) {
    const std::string why = "cannot move the finished file into place: " + ec.message();
    fs::remove(tmp_, ec);
    throw OutputError(path_, why);
  }
  // The rename itself is durable only once the folder's entry is synced. Filesystems that cannot
  // sync a directory (EINVAL, e.g. some FUSE/network mounts) have no stronger guarantee to give.
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    int rc = fsync_retry(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0 && err != EINVAL && err != EROFS)
      throw OutputError(path_, fmt::format("the file is in place but its folder could not be "
                                           "synced to disk: {}",
                                           std::strerror(err)));
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  if (path == "-") {
    std::fflush(stdout);
    errno = 0;
    if (!write_all(STDOUT_FILENO, content))
      throw OutputError("<standard output>", fmt::format("writing the output failed: {}",
                                                         std::strerror(errno != 0 ? errno : EIO)));
    return;
  }
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

std::string resolve_data_file(const std::string& dir, const std::string& name,
                              const std::string& flag, FileCache* files) {
  std::error_code ec;
  // One the cache cannot read (unreadable, a FIFO, a directory) is still resolved, for the loader
  // to report.
  auto exists = [&](const std::string& path) {
    return (files && files->bytes(path) != nullptr) || fs::exists(path, ec);
  };
  if (name.find('/') != std::string::npos || name.ends_with(".json")) {
    if (exists(name)) return name;
    throw InputError(name, flag, "file does not exist");
  }
  // (fs::path(data_dir()) / dir / (name + ".json")).string(), without the path objects.
  std::string candidate = data_dir();
  if (!candidate.empty() && candidate.back() != '/') candidate += '/';
  candidate.append(dir).append("/").append(name).append(".json");
  if (exists(candidate)) return candidate;
  const fs::path base = fs::path(data_dir()) / dir;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(base, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError("<command line>", flag,
                   fmt::format("unknown preset '{}' (presets: {})", printable(name), list));
}

}  // namespace zerosim
