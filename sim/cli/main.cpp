// zerosim command line: subcommands registered from cmd_*.cpp; exit 0 ok, 2 bad input, 1 anything
// else.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/did_you_mean.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/malloc_tuning.hpp"
#include "sim/core/utf8.hpp"
#include "sim/result/step_result.hpp"
#include "sim/sweep/distributed.hpp"

namespace {

// Messages quote arguments and input: capped, valid UTF-8, no terminal control characters.
std::string safe(const char* message) { return zerosim::printable(message, 2048, true); }

// Names of the .json files in dir, sorted, without the extension.
std::string presets_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

// --version: the version and where this binary reads its presets from (as ds_report does).
std::string version_report() {
  std::string o = fmt::format("zerosim {}\nresult schema_version {}\nMPI sweeps: {}\n",
                              ZEROSIM_VERSION, zerosim::kResultSchemaVersion,
                              zerosim::sweep::built_with_mpi() ? "yes" : "no (not built with MPI)");
  try {
    const std::filesystem::path data = zerosim::data_dir();
    o += fmt::format("data: {}\nclusters: {}\nmodels: {}\nprofiles: {}", data.string(),
                     presets_in(data / "topologies"), presets_in(data / "workloads"),
                     presets_in(data / "calibrate" / "profiles"));
  } catch (const zerosim::InputError& e) {
    o += fmt::format("data: not found ({})", e.what());
  }
  return safe(o.c_str());
}

// The command: the handlers map each kind of error to its exit code and message.
int run(int argc, char** argv) {
  CLI::App app{"zerosim: ZeRO-3 / ZeRO++ cluster simulator and planner"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_report,
                       "print the version, the data folder and its presets, and exit");
  zerosim::cli::register_commands(app);
  try {
    // Every argument may end up in a JSON result, which must be valid UTF-8.
    for (int i = 1; i < argc; ++i) zerosim::require_utf8(argv[i], "argument " + std::to_string(i));
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "zerosim: error: <command line>: %s%s\n", safe(e.what()).c_str(),
                 safe(zerosim::cli::parse_error_hint(app).c_str()).c_str());
    return 2;
  } catch (const zerosim::InputError& e) {
    std::fprintf(stderr, "zerosim: error: %s\n", safe(e.what()).c_str());
    return 2;
  } catch (const zerosim::OutputError& e) {  // the input was fine; writing the result failed
    std::fprintf(stderr, "zerosim: error: %s\n", safe(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {  // not a bug to report as such: the run is too large
    std::fprintf(stderr,
                 "zerosim: error: out of memory: this run needs more memory than the process may "
                 "use (fewer --grad-accum micro-steps, --qgz-chunks, nodes or sweep scenarios "
                 "need less)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerosim: internal error: %s\n", safe(e.what()).c_str());
    return 1;
  }
  return 0;
}

// Standard output is an output like --out: a full disk or a closed pipe behind it is an error
// (exit 1 with the OS error), not a success with the result lost.
int flush_stdout(int code) {
  errno = 0;  // std::cout shares stdout's buffer: its flush is stdout's
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && !std::cout.fail()) return code;
  // errno is that of the failed flush; an earlier failure (output past 1 MiB) left no errno.
  if (errno != 0)
    std::fprintf(stderr, "zerosim: error: <standard output>: writing the output failed: %s\n",
                 std::strerror(errno));
  else
    std::fputs("zerosim: error: <standard output>: writing the output failed\n", stderr);
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  zerosim::keep_freed_memory();
  // Past a file size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk
  // (exit 1, the path and the OS error, no partial file), instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // Standard output to a file or a pipe is written in 1 MiB pieces: a failure then surfaces at a
  // flush that reports its OS error, not inside a printf that leaves only the stream's error flag.
  if (!::isatty(STDOUT_FILENO)) std::setvbuf(stdout, nullptr, _IOFBF, std::size_t{1} << 20);
  try {
    return flush_stdout(run(argc, argv));
  } catch (...) {
    // Building the app or a handler's own message failed (out of memory): a fixed message needs
    // no allocation.
    std::fputs("zerosim: internal error while setting up the command line or reporting an error\n",
               stderr);
    return 1;
  }
}
