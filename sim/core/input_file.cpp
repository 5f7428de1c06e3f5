#include "sim/core/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

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

}  // namespace

std::optional<std::string> read_regular_file(const std::string& path, std::string& why,
                                             struct stat* st_out) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; fstat
  // then refuses it before any read. Regular files ignore the flag.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = open_error(errno);
    return std::nullopt;
  }
  struct stat st {};
  std::optional<std::string> text;
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
    text = read_all(fd, static_cast<std::size_t>(st.st_size), why);
  }
  ::close(fd);
  if (st_out) *st_out = st;
  return text;
}

std::string read_input_file(const std::string& path) {
  std::string why;
  auto text = read_regular_file(path, why);
  if (!text) throw InputError(path, "", why);
  return std::move(*text);
}

}  // namespace zerosim
