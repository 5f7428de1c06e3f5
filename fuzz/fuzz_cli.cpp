// Fuzzes the command line of every subcommand. The first input byte picks the subcommand
// (simulate, sweep, plan, collective, report, compare, topology, calibrate fit, calibrate
// import-nccl-tests), the rest is its arguments, one per line. The command runs in validation-only
// mode: CLI11 parses, the command checks its flags and stops where its work would begin
// (cli::begin_work). A CLI11 usage error or an InputError is the command line doing its job;
// anything else is a bug, and so is an InputError naming a flag that the subcommand does not have.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_common.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/utf8.hpp"

namespace {

// The flag an InputError's path starts with ("--nodes" of "--nodes/2"), or "" when none.
std::string flag_of(const std::string& path) {
  if (!path.starts_with("--")) return "";
  std::size_t end = 2;
  while (end < path.size() &&
         (std::isalnum(static_cast<unsigned char>(path[end])) != 0 || path[end] == '-'))
    ++end;
  return path.substr(0, end);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::vector<std::string>> commands = {
      {"simulate"},
      {"sweep"},
      {"plan"},
      {"collective"},
      {"report"},
      {"compare"},
      {"topology"},
      {"calibrate", "fit"},
      {"calibrate", "import-nccl-tests"}};
  if (size == 0) return 0;
  zerosim::cli::set_validation_only(true);
  const std::vector<std::string>& command = commands[data[0] % commands.size()];
  std::vector<std::string> args = command;
  const std::string_view rest = zerosim::fuzz::as_text(data + 1, size - 1);
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t nl = std::min(rest.find('\n', start), rest.size());
    args.emplace_back(rest.substr(start, nl - start));
    start = nl + 1;
  }
  zerosim::fuzz::expect_input_error_only([&] {
    CLI::App app{"zerosim"};
    app.require_subcommand(1);
    zerosim::cli::register_commands(app);
    CLI::App* leaf = &app;
    for (const auto& name : command) leaf = leaf->get_subcommand(name);
    try {
      for (std::size_t i = 0; i < args.size(); ++i)
        zerosim::require_utf8(args[i], "argument " + std::to_string(i + 1));
      std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11's order
      app.parse(reversed);
    } catch (const CLI::ParseError&) {
    } catch (const zerosim::cli::ValidationDone&) {
    } catch (const zerosim::InputError& e) {
      const std::string flag = flag_of(e.path());
      if (!flag.empty() && leaf->get_option_no_throw(flag) == nullptr) {
        std::fprintf(stderr, "the message names %s, which `%s` does not have: %s\n", flag.c_str(),
                     leaf->get_name().c_str(), e.what());
        std::abort();
      }
      throw;
    }
  });
  return 0;
}
