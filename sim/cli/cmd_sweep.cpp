// `zerosim sweep`: every simulate flag takes a comma-separated list; runs the cartesian product on
// a thread pool (and across MPI ranks under mpirun), writes one JSON document and/or a CSV
// atomically.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/tables.hpp"
#include "sim/sweep/distributed.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::cli {

namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::map<std::string, std::string> lists;  // flag -> raw comma list
  std::map<std::string, CLI::Option*> options;
  std::string out, csv;
  int threads = 0;
  bool resume = false;
};

// On a terminal: a bar, the count and, once a scenario has finished, the time left at the rate so
// far. Called under the runner's lock.
void progress_bar(std::size_t done, std::size_t total) {
  using Clock = std::chrono::steady_clock;
  static const Clock::time_point start = Clock::now();
  constexpr int kWidth = 40;
  int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::string eta(24, ' ');  // blanks over a longer previous line
  if (done > 0 && done < total) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    eta = fmt::format(", about {:.0f} s left   ", left);
  }
  std::fprintf(stderr, "\r[%s%s] %zu/%zu scenarios%s",
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), done, total,
               eta.c_str());
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

void run_sweep_command(SweepArgs& a) {
  std::vector<sweep::Axis> axes;
  json axes_json = json::object();
  for (const auto& flag : sweep::sweep_flags()) {
    if (a.options.at(flag)->count() == 0) continue;
    axes.push_back({flag, sweep::split_list(a.lists.at(flag), flag)});
  }
  auto scenarios = sweep::expand(Scenario{}, axes);
  for (const auto& flag : sweep::sweep_flags())
    for (const auto& ax : axes)
      if (ax.flag == flag) axes_json[flag.substr(2)] = ax.values;
  if (a.threads < 0) throw flag_error("--threads", "must be at least 1 (or 0 for all cores)");
  if (a.resume && a.out.empty())
    throw flag_error("--resume", "needs --out (the partial file is OUT.partial)");
  // Fails before any work when an output cannot be written or would replace an input or the other
  // output (no half-run sweep for a typo in a path).
  std::vector<FlagPath> inputs;
  for (const auto& ax : axes)
    for (const auto& v : ax.values) {
      if (ax.flag == "--cluster") inputs.push_back(data_input(ax.flag, "topologies", v));
      if (ax.flag == "--model") inputs.push_back(data_input(ax.flag, "workloads", v));
      if (ax.flag == "--profile") inputs.push_back(data_input(ax.flag, "calibrate/profiles", v));
      if (ax.flag == "--deepspeed") inputs.push_back({ax.flag, v});
    }
  check_output_paths(inputs, {{"--out", a.out}, {"--csv", a.csv}});

  sweep::MpiSession session;
  const sweep::World& world = session.world();
  sweep::RunOptions opt;
  opt.threads = sweep::resolve_threads(a.threads, world.local_size);
  if (!a.out.empty()) {
    opt.partial_path =
        world.size > 1 ? fmt::format("{}.partial.r{}", a.out, world.rank) : a.out + ".partial";
    if (a.resume) opt.resume_from = sweep::partial_files_for(a.out);
  }
  if (world.rank == 0 && ::isatty(STDERR_FILENO)) opt.progress = progress_bar;

  sweep::RankOutcome mine;
  opt.invalid = &mine.invalid;  // a bad combination is listed; the valid scenarios still run
  try {
    mine.results = sweep::run_scenarios(scenarios, sweep::indices_for_rank(scenarios.size(), world),
                                        sweep::simulate_runner(), opt);
  } catch (const InputError& e) {
    if (!world.mpi) throw;
    mine = {{}, {}, 2, e.what(), e.file(), e.path(), e.rule()};
  } catch (const std::exception& e) {
    if (!world.mpi) throw;
    mine = {{}, {}, 1, e.what(), "", "", ""};
  }
  auto all = sweep::gather_outcomes(mine, scenarios.size(), world);
  if (world.rank != 0) return;  // rank 0 reports and writes
  if (all.error_code == 2) throw InputError(all.error_file, all.error_path, all.error_rule);
  if (all.error_code != 0) throw std::runtime_error(all.error_message);

  std::vector<StepResult> results;
  results.reserve(scenarios.size());
  std::size_t next_invalid = 0;
  for (std::size_t i = 0; i < all.results.size(); ++i) {
    if (next_invalid < all.invalid.size() && all.invalid[next_invalid].index == i) {
      ++next_invalid;
      continue;
    }
    if (!all.results[i])
      throw std::runtime_error("internal: a sweep result is missing after the gather");
    results.push_back(std::move(*all.results[i]));
  }
  for (const auto& v : all.invalid)
    std::fprintf(stderr, "zerosim sweep: scenario #%zu (%s) not run: %s\n", v.index,
                 sweep::scenario_label(scenarios[v.index]).c_str(), v.message.c_str());
  const auto invalid_error = [&] {
    return InputError(
        "<command line>", fmt::format("sweep scenario #{}", all.invalid.front().index),
        fmt::format("{} of {} scenarios are bad input and were not run (each listed above{}); the "
                    "first: {}",
                    all.invalid.size(), scenarios.size(),
                    a.out.empty() || results.empty() ? "" : ", and under \"invalid\" in " + a.out,
                    all.invalid.front().message));
  };
  if (results.empty()) throw invalid_error();  // nothing to write
  json doc = sweep::sweep_document(axes_json, results, scenarios, all.invalid);
  require_finite_result(doc, "the sweep's results");
  std::string text = doc.dump(1) + "\n";
  if (!a.csv.empty()) write_file_atomic(a.csv, report::render_csv(report::views_of(results)));
  if (!a.out.empty()) write_file_atomic(a.out, text);
  if (a.out.empty() && a.csv.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
  if (!a.out.empty()) {
    std::error_code ec;
    for (const auto& f : sweep::partial_files_for(a.out)) fs::remove(f, ec);
  }
  std::fprintf(stderr, "zerosim sweep: %zu scenarios%s%s%s%s\n", results.size(),
               a.out.empty() ? "" : ", JSON ", a.out.c_str(), a.csv.empty() ? "" : ", CSV ",
               a.csv.c_str());
  if (!all.invalid.empty()) throw invalid_error();
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run the cartesian product of comma-separated lists of simulate flags (threads, MPI ranks)");
  // Every scenario parameter of the schema; each value of a list is checked by its entry's rule.
  for (const auto& p : scenario_params()) {
    const std::string range = scenario_param_range(p);
    args->options[p.flag] =
        cmd->add_option(p.flag, args->lists[p.flag],
                        "comma-separated list: " + scenario_param_help(p, false))
            ->type_name((range.empty() ? scenario_param_type(p) : range) + ",...");
  }
  cmd->add_option("--out", args->out,
                  "sweep JSON output (atomic; OUT.partial keeps finished results meanwhile)");
  cmd->add_option("--csv", args->csv, "CSV output (atomic)");
  cmd->add_option("--threads", args->threads,
                  "worker threads per process (default: all cores / ranks per host)");
  cmd->add_flag("--resume", args->resume,
                "reuse the finished results of an interrupted sweep (OUT.partial)");
  cmd->callback([args] { run_sweep_command(*args); });
}

}  // namespace zerosim::cli
