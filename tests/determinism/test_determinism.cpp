// Determinism: the same scenario must give byte-identical JSON on a rerun, with any sweep thread
// count and with any number of MPI ranks (rank 0 gathers results back into scenario order). Runs
// the built zerosim binary and compares the files it writes byte for byte.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/files.hpp"

namespace fs = std::filesystem;

namespace {

// A small but complete scenario: two DGX H100 nodes (16 GPUs), flow tier, ZeRO++ with every
// component.
const std::string kScenario =
    "--cluster dgx-h100 --nodes 2 --model gpt-18b --tier flow --tokens-per-gpu 1024";
// A sweep over nodes and strategy: 4 scenarios, enough to spread over 2 threads and 2 ranks.
const std::string kSweep =
    "--cluster dgx-h100 --nodes 1,2 --model gpt-18b --strategy zero3,zeropp --tier flow "
    "--tokens-per-gpu 1024";

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("zerosim-determinism-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// Runs a shell command, returns its exit code; output goes to `log` for diagnostics.
int run(const std::string& cmd, std::string& log) {
  FILE* pipe = popen((cmd + " 2>&1 </dev/null").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) log.append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs `zerosim <args>` (with an optional launcher prefix such as mpirun) and returns the JSON it
// wrote.
std::string run_to_json(const std::string& prefix, const std::string& args,
                        const std::string& out) {
  std::string log;
  const int code =
      run(prefix + "'" + std::string(ZEROSIM_CLI) + "' " + args + " --out '" + out + "'", log);
  INFO("command output:\n" << log);
  REQUIRE(code == 0);
  std::string text = slurp(out);
  REQUIRE(text.size() > 2);
  return text;
}

bool have_program(const char* name) {
  std::string log;
  return run(std::string("command -v ") + name, log) == 0;
}

}  // namespace

TEST_CASE("simulate: two runs of the same scenario write byte-identical JSON") {
  TempDir tmp;
  const std::string args = "simulate " + kScenario + " --strategy zeropp";
  const std::string a = run_to_json("", args, tmp.file("a.json"));
  const std::string b = run_to_json("", args, tmp.file("b.json"));
  CHECK(a == b);
}

TEST_CASE("sweep: two runs, and --threads 1 vs --threads 2, write byte-identical JSON") {
  TempDir tmp;
  const std::string t1 = run_to_json("", "sweep " + kSweep + " --threads 1", tmp.file("t1.json"));
  const std::string t1b = run_to_json("", "sweep " + kSweep + " --threads 1", tmp.file("t1b.json"));
  const std::string t2 = run_to_json("", "sweep " + kSweep + " --threads 2", tmp.file("t2.json"));
  CHECK(t1 == t1b);
  CHECK(t1 == t2);
  // Every finished sweep removes its partial file.
  CHECK_FALSE(fs::exists(tmp.file("t2.json.partial")));
}

TEST_CASE(
    "sweep: mpirun -np 1 vs -np 2 write byte-identical JSON (and equal a run without mpirun)") {
#ifndef ZEROSIM_HAVE_MPI
  MESSAGE("SKIPPED: zerosim was built without MPI (find_package(MPI) failed)");
  return;
#else
  if (!have_program("mpirun")) {
    MESSAGE("SKIPPED: mpirun not found on PATH");
    return;
  }
  TempDir tmp;
  // Root in containers, more ranks than cores on small CI machines; shared-memory transport without
  // CMA.
  const std::string mpirun =
      "mpirun --allow-run-as-root --oversubscribe --bind-to none "
      "--mca btl self,vader --mca btl_vader_single_copy_mechanism none -np ";
  const std::string plain =
      run_to_json("", "sweep " + kSweep + " --threads 1", tmp.file("plain.json"));
  const std::string np1 =
      run_to_json(mpirun + "1 ", "sweep " + kSweep + " --threads 1", tmp.file("np1.json"));
  const std::string np2 =
      run_to_json(mpirun + "2 ", "sweep " + kSweep + " --threads 1", tmp.file("np2.json"));
  CHECK(np1 == np2);
  CHECK(plain == np1);
  CHECK_FALSE(fs::exists(tmp.file("np2.json.partial.r0")));
  CHECK_FALSE(fs::exists(tmp.file("np2.json.partial.r1")));
#endif
}
