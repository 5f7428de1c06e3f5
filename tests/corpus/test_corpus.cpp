// Bad-input corpus: every folder under tests/corpus/cases holds a case.json (the zerosim command
// line, relative to the repository root, with {case} standing for the case folder and {tmp} for a
// fresh scratch folder where outputs go if a case wrongly succeeds; the expected exit code; and
// fragments the error message must contain; optionally "fifos", paths under {tmp} made FIFOs before
// the run, for inputs git cannot hold, and "copies", [from, to] pairs copied before the run, for
// cases that must not be able to damage a file of the repository) plus the input files it names.
// Each case runs the built binary under a timeout and must exit with exactly the expected code (2 =
// bad input): no crash, no hang, no silent default, no "internal error", and no sanitizer report.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/utf8.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kCases = fs::path(ZEROSIM_SOURCE_DIR) / "tests" / "corpus" / "cases";
constexpr int kTimeoutS = 120;  // generous for sanitizer builds; a parse error takes milliseconds

struct Case {
  std::string name, area, why;
  std::vector<std::string> args;
  int exit = 2;
  std::vector<std::string> fragments;
  std::vector<std::string> fifos;  // "{tmp}/..." paths created as FIFOs before the run
  std::vector<std::pair<std::string, std::string>> copies;  // [from, "{tmp}/..."] before the run
};

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  for (const auto& entry : fs::directory_iterator(kCases)) {
    if (!entry.is_directory()) continue;
    std::ifstream in(entry.path() / "case.json");
    REQUIRE_MESSAGE(in, "case folder without case.json: " << entry.path());
    const json j = json::parse(in);
    Case c;
    c.name = entry.path().filename().string();
    c.area = j.at("area").get<std::string>();
    c.why = j.value("why", "");
    c.args = j.at("args").get<std::vector<std::string>>();
    c.exit = j.at("exit").get<int>();
    const auto& m = j.at("message");
    if (m.is_string())
      c.fragments.push_back(m.get<std::string>());
    else
      c.fragments = m.get<std::vector<std::string>>();
    if (j.contains("fifos")) c.fifos = j.at("fifos").get<std::vector<std::string>>();
    if (j.contains("copies"))
      c.copies = j.at("copies").get<std::vector<std::pair<std::string, std::string>>>();
    cases.push_back(std::move(c));
  }
  // Sorted so that SUBCASE order (and the report) does not depend on directory order.
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string replace_all(std::string arg, const std::string& key, const std::string& value) {
  for (auto pos = arg.find(key); pos != std::string::npos; pos = arg.find(key, pos + value.size()))
    arg.replace(pos, key.size(), value);
  return arg;
}

// A scratch folder per case, removed afterwards, so no case writes into the source tree.
struct Scratch {
  fs::path path;
  explicit Scratch(const std::string& name) {
    path =
        fs::temp_directory_path() / ("zerosim-corpus-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct RunResult {
  int code = -1;  // exit code; 128 + signal when killed; 124 = timed out
  std::string output;
};

RunResult run(const Case& c) {
  const std::string case_dir = "tests/corpus/cases/" + c.name;
  const Scratch scratch(c.name);
  for (const auto& [from, to] : c.copies)
    fs::copy_file(fs::path(ZEROSIM_SOURCE_DIR) / replace_all(from, "{case}", case_dir),
                  replace_all(to, "{tmp}", scratch.path.string()));
  for (const auto& f : c.fifos) {
    const std::string fifo = replace_all(f, "{tmp}", scratch.path.string());
    REQUIRE_MESSAGE(::mkfifo(fifo.c_str(), 0600) == 0, "cannot create FIFO " << fifo);
  }
  std::string cmd = "cd " + shell_quote(ZEROSIM_SOURCE_DIR) + " && timeout " +
                    std::to_string(kTimeoutS) + " " + shell_quote(ZEROSIM_CLI);
  for (const auto& a : c.args)
    cmd += " " + shell_quote(replace_all(replace_all(a, "{case}", case_dir), "{tmp}",
                                         scratch.path.string()));
  cmd += " 2>&1 </dev/null";
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  if (WIFEXITED(status))
    r.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.code = 128 + WTERMSIG(status);
  return r;
}

}  // namespace

TEST_CASE("bad-input corpus: at least 40 cases covering every input kind") {
  const auto cases = load_cases();
  CHECK(cases.size() >= 40);
  std::map<std::string, int> per_area;
  for (const auto& c : cases) ++per_area[c.area];
  for (const char* area : {"topology", "workload", "hf-config", "deepspeed", "fsdp-config",
                           "profile", "nccl-tests", "results", "cli"}) {
    INFO("area " << area);
    CHECK(per_area[area] > 0);
  }
  std::set<std::string> known = {"topology", "workload",   "hf-config", "deepspeed", "fsdp-config",
                                 "profile",  "nccl-tests", "results",   "cli"};
  for (const auto& c : cases) {
    INFO("case " << c.name);
    CHECK(known.count(c.area) == 1);
    CHECK(!c.fragments.empty());
  }
  MESSAGE("corpus: " << cases.size() << " cases");
}

TEST_CASE("bad-input corpus: each case exits with its code and names the problem") {
  const auto cases = load_cases();
  for (const auto& c : cases) {
    SUBCASE(c.name.c_str()) {
      const RunResult r = run(c);
      INFO("case " << c.name << " (" << c.area << "): " << c.why);
      INFO("output:\n" << r.output);
      if (r.code == 124) FAIL_CHECK("hang: no exit within " << kTimeoutS << " s");
      if (r.code > 128) FAIL_CHECK("crash: killed by signal " << (r.code - 128));
      CHECK(r.code == c.exit);
      for (const auto& f : c.fragments) {
        INFO("expected message fragment: " << f);
        CHECK(r.output.find(f) != std::string::npos);
      }
      // A bad input is the user's error, reported as such; anything else is a bug in zerosim.
      CHECK(r.output.find("internal error") == std::string::npos);
      CHECK(r.output.find("runtime error:") == std::string::npos);  // UBSan
      CHECK(r.output.find("AddressSanitizer") == std::string::npos);
      // Whatever the input holds, the message is valid UTF-8 without terminal escapes.
      CHECK(zerosim::is_valid_utf8(r.output));
      CHECK(r.output.find('\x1B') == std::string::npos);
    }
  }
}
