// write_file_atomic: a symlink at the output is written through (the target replaced, the link
// kept); a folder at the output is a clear InputError (not "Success"); a failed write (here a file
// size limit, as a full disk) is an OutputError, exit 1, naming the path and the OS error, and
// leaves the old file and no temporary behind.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "tests/support/files.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

TEST_CASE("a new file is written; an existing one replaced") {
  ScratchDir d("write");
  write_file_atomic((d.path / "new.json").string(), "one");
  CHECK(slurp(d.path / "new.json") == "one");
  write_file_atomic((d.path / "new.json").string(), "two");
  CHECK(slurp(d.path / "new.json") == "two");
}

TEST_CASE("a symlink at the output is written through, not replaced") {
  ScratchDir d("write");
  std::ofstream(d.path / "target.json") << "old";
  fs::create_symlink("target.json", d.path / "link.json");
  write_file_atomic((d.path / "link.json").string(), "new");
  CHECK(fs::is_symlink(d.path / "link.json"));
  CHECK(slurp(d.path / "target.json") == "new");
}

TEST_CASE("a folder at the output is an InputError that says so") {
  ScratchDir d("write");
  fs::create_directories(d.path / "out.json");
  const auto e =
      caught_input_error([&] { write_file_atomic((d.path / "out.json").string(), "x"); });
  CHECK(std::string(e.what()).find("output path is a folder") != std::string::npos);
  CHECK(std::string(e.what()).find("Success") == std::string::npos);
}

TEST_CASE("a failed write is an OutputError with the path and the OS error; the old file stays") {
  ScratchDir d("write");
  const fs::path out = d.path / "r.json";
  std::ofstream(out) << "old";
  // A file size limit of 1 KiB makes write() fail with EFBIG, as a full disk fails with ENOSPC.
  struct rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string what;
  bool output_error = false;
  try {
    write_file_atomic(out.string(), std::string(std::size_t{64} * 1024, 'x'));
  } catch (const OutputError& e) {
    output_error = true;
    what = e.what();
  } catch (const std::exception& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  INFO(what);
  CHECK(output_error);
  CHECK(what.find(out.string()) != std::string::npos);
  CHECK(what.find("File too large") != std::string::npos);
  CHECK(slurp(out) == "old");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++files;
  CHECK(files == 1);  // no temporary left behind
}

TEST_CASE("AtomicFile: pieces appear together at commit; without commit nothing changes") {
  ScratchDir d("write_pieces");
  const fs::path out = d.path / "s.json";
  std::ofstream(out) << "old";
  std::string expected;
  {
    AtomicFile f(out.string());
    for (int i = 0; i < 3000; ++i) {  // past the write buffer: several writes to the file
      const std::string piece = std::to_string(i) + std::string(1000, 'y') + "\n";
      f.write(piece);
      expected += piece;
    }
    CHECK(slurp(out) == "old");  // nothing visible before commit
    f.commit();
  }
  CHECK(slurp(out) == expected);
  {
    AtomicFile abandoned(out.string());
    abandoned.write("never");
  }  // destroyed without commit: the temporary file goes, the file stays
  CHECK(slurp(out) == expected);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++files;
  CHECK(files == 1);
}
