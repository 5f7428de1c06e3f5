// Input files: a FIFO, a directory or a missing file given as any input is refused at once (never
// blocks waiting for a writer) with an InputError naming the file and the rule; a regular file is
// read whole, or line by line (for_each_input_line). Covers read_input_file, FileCache::bytes and
// every loader built on them.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/fit/measurements.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_io.hpp"
#include "sim/profile/cost_profile.hpp"
#include "sim/strategy/deepspeed_config.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/model.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST_CASE("read_input_file: a regular file is read whole; others are refused with the rule") {
  ScratchDir dir("input");
  const std::string file = (dir.path / "a.json").string();
  std::ofstream(file) << "{\"x\": 1}";
  CHECK(read_input_file(file) == "{\"x\": 1}");

  const std::string fifo = (dir.path / "fifo.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string msg = input_error_of([&] { read_input_file(fifo); });
  CHECK(msg.find(fifo) != std::string::npos);
  CHECK(msg.find("not a regular file (a FIFO)") != std::string::npos);

  msg = input_error_of([&] { read_input_file(dir.path.string()); });
  CHECK(msg.find("not a regular file (a directory)") != std::string::npos);

  msg = input_error_of([&] { read_input_file((dir.path / "missing.json").string()); });
  CHECK(msg.find("file does not exist") != std::string::npos);

  std::string why;
  CHECK_FALSE(read_regular_file(fifo, why).has_value());
  CHECK(FileCache().bytes(fifo) == nullptr);  // the file cache does not block on it either
  CHECK(FileCache(false).bytes(fifo) == nullptr);
}

TEST_CASE("every loader refuses a FIFO without blocking, naming the file") {
  ScratchDir dir("input");
  const std::string fifo = (dir.path / "in.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto check = [&](const std::string& msg) {
    INFO(msg);
    CHECK(msg.find(fifo) != std::string::npos);
    CHECK(msg.find("FIFO") != std::string::npos);
  };
  check(input_error_of([&] { load_json_file(fifo); }));
  check(input_error_of([&] { load_cluster(fifo, {}); }));
  check(input_error_of([&] { load_model(fifo); }));
  check(input_error_of([&] { load_cost_profile(fifo); }));
  check(input_error_of([&] { load_deepspeed(fifo); }));
  check(input_error_of([&] { calib::load_nccl_tests(fifo, {}); }));
  calib::Measurements m;
  check(input_error_of([&] { calib::load_measurements(fifo, m); }));
}

TEST_CASE("for_each_input_line: the lines getline gives, an unterminated last one marked") {
  ScratchDir dir("input_lines");
  const std::string file = (dir.path / "p.jsonl").string();
  const std::string long_line(200000, 'z');  // longer than one read
  std::string long_cut = "x\n";
  long_cut.append(long_line).append("\n").append(long_line);
  std::string long_ended = long_line;
  long_ended.append("\n").append(long_line).append("\n");
  for (const std::string& text :
       {std::string(), std::string("a"), std::string("a\n"), std::string("a\nb"),
        std::string("a\n\nb\n"), std::string("\n\n"), long_cut, long_ended}) {
    spit(file, text);
    std::vector<std::pair<std::string, bool>> got, want;
    for_each_input_line(file, [&](std::string_view line, bool unterminated) {
      got.emplace_back(std::string(line), unterminated);
    });
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) want.emplace_back(line, in.eof());  // eof: no newline found
    CHECK(got == want);
  }
  const std::string fifo = (dir.path / "fifo.jsonl").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string msg =
      input_error_of([&] { for_each_input_line(fifo, [](std::string_view, bool) {}); });
  CHECK(msg.find("not a regular file (a FIFO)") != std::string::npos);
}
