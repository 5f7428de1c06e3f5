#include "sim/core/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "sim/core/error.hpp"

namespace zerosim {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string open_error(int err) {
  if (err == ENOENT) return "file does not exist";
  return fmt::format("file cannot be opened for reading: {}", std::strerror(err));
}

std::string too_large() {
  return fmt::format("file is larger than the input limit of {} bytes (1 GiB)", kMaxInputFileBytes);
}

// Reads an open regular file of `size` bytes to its end, at most kMaxInputFileBytes.
std::optional<std::string> read_all(int fd, std::size_t size, std::string& why) {
  std::string s(size, '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == s.size()) {  // the file grew since fstat
      if (s.size() >= static_cast<std::size_t>(kMaxInputFileBytes)) {
        why = too_large();
        return std::nullopt;
      }
      s.resize(s.size() + 4096);
    }
    const ssize_t n = ::read(fd, s.data() + got, s.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = fmt::format("reading the file failed: {}", std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) {
      s.resize(got);
      return s;
    }
    got += static_cast<std::size_t>(n);
  }
}

// Opens `path` for reading if it is a regular file of at most kMaxInputFileBytes (blocking reads
// from then on); otherwise -1 and the rule it broke in `why`. `st` receives fstat's view.
int open_regular_file(const std::string& path, std::string& why, struct stat& st) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; fstat
  // then refuses it before any read. Regular files ignore the flag.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = open_error(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    why = fmt::format("file cannot be examined: {}", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why =
        fmt::format("not a regular file ({}): inputs must be regular files", file_kind(st.st_mode));
  } else if (st.st_size > kMaxInputFileBytes) {
    why = too_large();
  } else {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace

std::optional<std::string> read_regular_file(const std::string& path, std::string& why,
                                             struct stat* st_out) {
  struct stat st {};
  std::optional<std::string> text;
  const int fd = open_regular_file(path, why, st);
  if (fd >= 0) {
    text = read_all(fd, static_cast<std::size_t>(st.st_size), why);
    ::close(fd);
  }
  if (st_out) *st_out = st;
  return text;
}

void for_each_input_line(const std::string& path,
                         const std::function<void(std::string_view line, bool last)>& fn) {
  std::string why;
  struct stat st {};
  const int fd = open_regular_file(path, why, st);
  if (fd < 0) throw InputError(path, "", why);
  std::string buffer;
  std::size_t start = 0;   // of the next line in buffer
  std::int64_t total = 0;  // bytes read
  bool eof = false;
  std::array<char, 1 << 16> chunk{};
  try {
    for (;;) {
      const std::size_t nl = buffer.find('\n', start);
      if (nl != std::string::npos) {
        fn(std::string_view(buffer).substr(start, nl - start), false);
        start = nl + 1;
        continue;
      }
      if (eof) {
        if (start < buffer.size()) fn(std::string_view(buffer).substr(start), true);
        break;
      }
      buffer.erase(0, start);
      start = 0;
      const ssize_t n = ::read(fd, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw InputError(path, "",
                         fmt::format("reading the file failed: {}", std::strerror(errno)));
      total += n;
      if (total > kMaxInputFileBytes) throw InputError(path, "", too_large());
      if (n == 0) eof = true;
      buffer.append(chunk.data(), static_cast<std::size_t>(n));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::string read_input_file(const std::string& path) {
  std::string why;
  auto text = read_regular_file(path, why);
  if (!text) throw InputError(path, "", why);
  return std::move(*text);
}

}  // namespace zerosim
