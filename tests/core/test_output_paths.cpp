// check_output_paths: an output that is an input of the same command (the same file however it is
// spelled: ./x, a symlink, a hard link), or another output of it, or a folder, is refused before
// any work with both flags named; distinct files pass.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/output_paths.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::vector<FlagPath>& in, const std::vector<FlagPath>& out) {
  try {
    check_output_paths(in, out);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an output naming an input of the same command is refused, naming both flags") {
  ScratchDir d("outpaths");
  std::ofstream(d / "t.json") << "{}";
  std::string e = error_of({{"--cluster", d / "t.json"}}, {{"--out", d / "t.json"}});
  CHECK(e.find("--out") != std::string::npos);
  CHECK(e.find("--cluster") != std::string::npos);
  CHECK(e.find("must not replace an input") != std::string::npos);

  // Other spellings of the same file: ./, a symlink, a hard link.
  fs::create_symlink(d / "t.json", d / "link.json");
  fs::create_hard_link(d / "t.json", d / "hard.json");
  const std::string dotted = (d.path / "." / "t.json").string();
  CHECK(error_of({{"--model", dotted}}, {{"--out", d / "t.json"}}) != "");
  CHECK(error_of({{"--model", d / "t.json"}}, {{"--out", d / "link.json"}}) != "");
  CHECK(error_of({{"--model", d / "t.json"}}, {{"--out", d / "hard.json"}}) != "");
  // A distinct file, a missing input, and stdout pass.
  CHECK(error_of({{"--model", d / "t.json"}}, {{"--out", d / "r.json"}, {"--trace", "-"}}) == "");
  CHECK(error_of({{"--model", d / "missing.json"}}, {{"--out", d / "missing.json"}}) == "");
}

TEST_CASE("two outputs naming the same file are refused, naming both flags") {
  ScratchDir d("outpaths");
  const std::string e =
      error_of({}, {{"--out", d / "s.json"}, {"--csv", (d.path / "." / "s.json").string()}});
  CHECK(e.find("--csv") != std::string::npos);
  CHECK(e.find("--out") != std::string::npos);
  CHECK(e.find("give each output its own file") != std::string::npos);
  CHECK(error_of({}, {{"--out", d / "s.json"}, {"--csv", d / "s.csv"}}) == "");
}

TEST_CASE("an output at a folder or in a missing folder is refused") {
  ScratchDir d("outpaths");
  CHECK(error_of({}, {{"--out", d.path.string()}}).find("output path is a folder") !=
        std::string::npos);
  CHECK(error_of({}, {{"--out", d / "no/such/r.json"}}).find("output folder does not exist") !=
        std::string::npos);
}

TEST_CASE("a preset name stands for its file in the data folder") {
  const FlagPath p = data_input("--cluster", "topologies", "dgx-h100");
  CHECK(p.path.ends_with("topologies/dgx-h100.json"));
  CHECK(error_of({p}, {{"--out", p.path}}).find("--cluster") != std::string::npos);
  CHECK(data_input("--model", "workloads", "./m.json").path == "./m.json");
}

TEST_CASE("an output that exists and is not a regular file is refused; a new path passes") {
  ScratchDir d("outpaths_special");
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
  fs::create_symlink(d / "fifo", d / "link");
  for (const std::string name : {"fifo", "link"}) {
    const std::string e = error_of({}, {{"--out", d / name}});
    INFO(e);
    CHECK(e.find("--out") != std::string::npos);
    CHECK(e.find("output path is a FIFO, not a regular file") != std::string::npos);
    CHECK(fs::is_fifo(d / name));
  }
  CHECK(non_regular_output_rule(d / "new.json").empty());
  std::ofstream(d / "file.json") << "{}";
  CHECK(non_regular_output_rule(d / "file.json").empty());
  CHECK(non_regular_output_rule("/dev/null").find("character device") != std::string::npos);
  CHECK(error_of({}, {{"--out", "-"}}).empty());  // standard output
}
