// zerosim command line: subcommands registered from cmd_*.cpp; exit 0 ok, 2 bad input, 1 anything
// else.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/malloc_tuning.hpp"
#include "sim/core/utf8.hpp"

namespace {

// Messages quote arguments and input: capped, valid UTF-8, no terminal control characters.
std::string safe(const char* message) { return zerosim::printable(message, 2048, true); }

}  // namespace

int main(int argc, char** argv) {
  zerosim::keep_freed_memory();
  // Past a file size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk
  // (exit 1, the path and the OS error, no partial file), instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"zerosim: ZeRO-3 / ZeRO++ cluster simulator and planner"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("zerosim ") + ZEROSIM_VERSION);
  zerosim::cli::register_simulate(app);
  zerosim::cli::register_collective(app);
  zerosim::cli::register_sweep(app);
  zerosim::cli::register_plan(app);
  zerosim::cli::register_report(app);
  zerosim::cli::register_topology(app);
  zerosim::cli::register_calibrate(app);
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
    std::fprintf(stderr, "zerosim: <command line>: %s\n", safe(e.what()).c_str());
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
