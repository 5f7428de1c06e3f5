// zerosim-calibrate on a machine without a usable GPU (all GPUs hidden with
// CUDA_VISIBLE_DEVICES="", so this also holds on GPU machines): a clear message, exit code 3, no
// measurement file. Bad arguments exit 2. Built and registered by calibrate/harness/CMakeLists.txt
// (only when the harness is built).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& env_and_args) {
  std::string cmd = env_and_args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST_CASE("no GPU: clear message, exit 3, nothing written") {
  auto out = std::filesystem::temp_directory_path() /
             ("zerosim_calib_nogpu_" + std::to_string(::getpid()) + ".jsonl");
  Run r = run("CUDA_VISIBLE_DEVICES= " + std::string(ZEROSIM_CALIBRATE) + " --out " + out.string());
  CAPTURE(r.out);
  CHECK(r.code == 3);
  CHECK(r.out.find("no usable CUDA GPU") != std::string::npos);
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("bad arguments exit 2 naming the flag") {
  Run r = run(std::string(ZEROSIM_CALIBRATE) + " --out x.jsonl --what fft");
  CHECK(r.code == 2);
  CHECK(r.out.find("--what") != std::string::npos);
  Run s = run(std::string(ZEROSIM_CALIBRATE) + " --out x.jsonl --max-bytes 12Q");
  CHECK(s.code == 2);
  CHECK(s.out.find("--max-bytes") != std::string::npos);
}
