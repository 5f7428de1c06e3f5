// read_regular_file: see memo.hpp.
#include "sim/core/memo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zerosim {

std::optional<std::string> read_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::string s(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    for (;;) {
      if (got == s.size()) s.resize(s.size() + 4096);  // the file grew since fstat
      const ssize_t n = ::read(fd, s.data() + got, s.size() - got);
      if (n < 0) break;
      if (n == 0) {
        s.resize(got);
        out = std::move(s);
        break;
      }
      got += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  return out;
}

}  // namespace zerosim
