// Runs the built zerosim binary (ZEROSIM_CLI) with arguments through the shell and captures its
// exit code and combined stdout + stderr, for the CLI tests that check exit codes and messages.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

struct CliRun {
  int rc;
  std::string out;  // stdout + stderr
};

// shell_prefix runs before the binary in the same shell, e.g. "ulimit -f 1 && ".
inline CliRun run(const std::string& args, const std::string& shell_prefix = "") {
  std::string cmd = shell_prefix + std::string(ZEROSIM_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
