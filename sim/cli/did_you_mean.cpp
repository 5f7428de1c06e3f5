// The closest subcommand or flag of each argument CLI11 did not expect.
#include "sim/cli/did_you_mean.hpp"

#include <vector>

#include "sim/core/closest_match.hpp"

namespace zerosim::cli {

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

}  // namespace

std::string parse_error_hint(const CLI::App& app) {
  const CLI::App* chosen = &app;
  while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
  std::string hint;
  for (const std::string& arg : chosen->remaining()) {
    const bool flag = arg.size() > 1 && arg[0] == '-';
    if (!flag && chosen != &app) continue;  // a stray value: no name to compare it with
    const std::string name = flag ? arg.substr(0, arg.find('=')) : arg;
    const std::string close =
        closest_match(name, flag ? flag_names(*chosen) : subcommand_names(app));
    if (!close.empty() && hint.find("'" + close + "'") == std::string::npos)
      hint += "; did you mean '" + close + "'?";
  }
  return hint;
}

}  // namespace zerosim::cli
