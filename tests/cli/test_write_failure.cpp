// A write that fails (here past a file size limit, as a full disk fails) is not bad input: the
// command exits 1, not 2, naming the output path and the OS error, and leaves no partial file.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("a failed write exits 1 with the path and the OS error, leaving nothing behind") {
  const fs::path dir =
      fs::temp_directory_path() / ("zerosim-write-failure-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "r.json").string();
  const std::string cmd = std::string("cd '") + ZEROSIM_SOURCE_DIR + "' && ulimit -f 1 && '" +
                          ZEROSIM_CLI +
                          "' simulate --cluster dgx-h100 --nodes 2 --strategy zero3 --model "
                          "gpt-18b --out '" +
                          out + "' 2>&1 >/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  const int status = pclose(pipe);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(output.find(out) != std::string::npos);
  CHECK(output.find("File too large") != std::string::npos);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}
