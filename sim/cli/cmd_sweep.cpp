// `zerosim sweep`: every simulate flag takes a comma-separated list; runs the cartesian product on
// a thread pool (and across MPI ranks under mpirun), writes one JSON document and/or a CSV
// atomically; without --out or --json (the document on standard output) it prints a table of the
// results. Scenarios are decoded from their index as they start, and each result's texts (its
// document text, its CSV row) are kept in scratch files by index as it finishes and written in
// scenario order, so memory does not grow with the number of scenarios.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "sim/cli/commands.hpp"
#include "sim/cli/validators.hpp"
#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/tables.hpp"
#include "sim/report/terminal_table.hpp"
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
  bool json = false;  // the JSON document on standard output (--json, --out -)
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

// A scratch partial file for a sweep without --out (its results are written from it in order),
// removed when the command ends.
class ScratchFile {
 public:
  ScratchFile() {
    const char* t = std::getenv("TMPDIR");
    std::string pattern = std::string(t && *t ? t : "/tmp") + "/zerosim-sweep-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      throw OutputError(
          pattern, fmt::format("cannot create the sweep's scratch file: {}", std::strerror(errno)));
    ::close(fd);
    path_ = pattern;
  }
  ~ScratchFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The listed flags, in the schema's order, each with its raw values.
std::vector<sweep::Axis> listed_axes(const SweepArgs& a) {
  std::vector<sweep::Axis> axes;
  for (const auto& flag : sweep::sweep_flags()) {
    if (a.options.at(flag)->count() == 0) continue;
    axes.push_back({flag, sweep::split_list(a.lists.at(flag), flag)});
  }
  return axes;
}

// The flags the axes do not check. Fails before any work when an output cannot be written or would
// replace an input or the other output (no half-run sweep for a typo in a path).
void check_sweep_flags(const SweepArgs& a, const std::vector<sweep::Axis>& axes) {
  if (a.threads < 0) throw flag_error("--threads", "must be at least 1 (or 0 for all cores)");
  if (a.resume && a.out.empty())
    throw flag_error("--resume", "needs --out (the partial file is OUT.partial)");
  std::vector<FlagPath> inputs;
  for (const auto& ax : axes)
    for (const auto& v : ax.values) {
      if (ax.flag == "--cluster") inputs.push_back(data_input(ax.flag, "topologies", v));
      if (ax.flag == "--model") inputs.push_back(data_input(ax.flag, "workloads", v));
      if (ax.flag == "--profile") inputs.push_back(data_input(ax.flag, "calibrate/profiles", v));
      if (ax.flag == "--deepspeed" || ax.flag == "--fsdp-config") inputs.push_back({ax.flag, v});
    }
  if (a.json && !a.out.empty())
    throw flag_error("--json", "prints the JSON document on standard output; --out " + a.out +
                                   " writes it to a file: give one of them");
  if (a.csv == "-")
    throw flag_error("--csv", "give a file, not '-' (--json prints the sweep's JSON document)");
  std::vector<FlagPath> outputs = {{"--out", a.out}, {"--csv", a.csv}};
  if (!a.out.empty()) outputs.push_back({"--out", a.out + ".partial"});  // where results go first
  check_output_paths(inputs, outputs);
}

// Says which scenarios are not run because their strategy does not read an axis.
void report_ignored(const std::vector<sweep::IgnoredAxes>& ignored) {
  for (const auto& g : ignored)
    std::fprintf(stderr, "zerosim sweep: %s does not read %s; %zu %s\n", g.strategy.c_str(),
                 fmt::format("{}", fmt::join(g.flags, ", ")).c_str(), g.not_run,
                 g.not_run == 1 ? "scenario that would repeat its results is not run"
                                : "scenarios that would repeat its results are not run");
}

// Every result goes to a partial file as it finishes: OUT.partial, or a scratch file without
// --out (the table and a non-finite result are written from it).
sweep::RunOptions run_options(const SweepArgs& a, const sweep::World& world,
                              std::optional<ScratchFile>& scratch) {
  sweep::RunOptions opt;
  opt.threads = sweep::resolve_threads(a.threads, world.local_size);
  if (!a.out.empty()) {
    opt.partial_path =
        world.size > 1 ? fmt::format("{}.partial.r{}", a.out, world.rank) : a.out + ".partial";
    if (a.resume) opt.resume_from = sweep::partial_files_for(a.out);
  } else {
    opt.partial_path = scratch.emplace().path();
  }
  if (world.rank == 0 && ::isatty(STDERR_FILENO)) opt.progress = progress_bar;
  return opt;
}

// Texts made as a sweep's results arrive (in any order: a result's CSV row, its text in the
// document), appended to a scratch file and read back by index: the outputs are written in
// scenario order without parsing each result again.
class ScratchRows {
 public:
  explicit ScratchRows(std::size_t total)
      : at_(total, {0, 0}), out_(scratch_.path(), std::ios::binary) {
    if (!out_) throw OutputError(scratch_.path(), "cannot open the sweep's scratch file");
  }
  void add(std::size_t index, std::string_view row) {
    at_[index] = {written_, row.size()};
    out_.write(row.data(), static_cast<std::streamsize>(row.size()));
    written_ += row.size();
  }
  bool has(std::size_t index) const { return at_[index].second > 0; }
  // The row of `index` (has(index)); the text stays valid until the next call.
  std::string_view row(std::size_t index) {
    if (!in_.is_open()) {
      out_.flush();
      if (!out_) throw OutputError(scratch_.path(), "writing the sweep's scratch file failed");
      in_.open(scratch_.path(), std::ios::binary);
    }
    const auto [offset, length] = at_[index];
    buf_.resize(length);
    in_.seekg(static_cast<std::streamoff>(offset));
    if (!in_.read(buf_.data(), static_cast<std::streamsize>(length)))
      throw std::runtime_error("the sweep's scratch file lost a text it had written");
    return buf_;
  }

 private:
  ScratchFile scratch_;
  std::vector<std::pair<std::uint64_t, std::size_t>> at_;  // per index: offset, length (0: none)
  std::ofstream out_;
  std::ifstream in_;
  std::uint64_t written_ = 0;
  std::string buf_;
};

// What this process ran: its outcome (under MPI with the results themselves, which travel to rank
// 0) and, in a single process, where each result's line starts in the partial file (0: none),
// each result's text in the document (unless the results go to a table) and, with --csv, each
// result's CSV row.
struct RankRun {
  sweep::RankOutcome outcome;
  std::vector<std::uint64_t> line_offset;
  std::unique_ptr<ScratchRows> doc_rows, csv_rows;
};

// Runs this rank's share of the scenarios. Under MPI a failure is kept in the outcome, for rank 0
// to report after the gather; alone it throws.
RankRun run_rank_share(std::size_t total, const sweep::ScenarioAt& scenario_at,
                       const std::vector<std::size_t>& running, const sweep::World& world,
                       sweep::RunOptions opt, bool csv, bool table) {
  RankRun run;
  sweep::RankOutcome& mine = run.outcome;
  opt.invalid = &mine.invalid;  // a bad combination is listed; the valid scenarios still run
  run.line_offset.assign(world.size > 1 ? 0 : total, 0);
  if (world.size > 1) mine.results.resize(total);
  if (csv && world.size == 1) run.csv_rows = std::make_unique<ScratchRows>(total);
  if (!table && world.size == 1) {
    run.doc_rows = std::make_unique<ScratchRows>(total);
    opt.document = [&run](std::size_t i, std::string_view text) { run.doc_rows->add(i, text); };
  }
  try {
    sweep::run_scenarios(total, scenario_at, sweep::indices_for_rank(running, world),
                         sweep::simulate_runner(), opt,
                         [&](std::size_t i, StepResult&& r, std::uint64_t offset) {
                           if (world.size > 1) {
                             mine.results[i] = std::move(r);
                             return;
                           }
                           run.line_offset[i] = offset;
                           if (run.csv_rows)
                             run.csv_rows->add(i, report::csv_row(report::view_of(r)));
                         });
  } catch (const InputError& e) {
    if (!world.mpi) throw;
    mine = {{}, {}, 2, e.what(), e.file(), e.path(), e.rule()};
  } catch (const std::exception& e) {
    if (!world.mpi) throw;
    mine = {{}, {}, 1, e.what(), "", "", ""};
  }
  return run;
}

// The error for the scenarios that were bad input (listed on stderr as they were found).
InputError invalid_error(const SweepArgs& a, const std::vector<sweep::InvalidScenario>& invalid,
                         std::size_t running) {
  const std::size_t written = running - invalid.size();
  return InputError(
      "<command line>", fmt::format("sweep scenario #{}", invalid.front().index),
      fmt::format("{} of {} scenarios are bad input and were not run (each listed above{}); the "
                  "first: {}",
                  invalid.size(), running,
                  a.out.empty() || written == 0 ? "" : ", and under \"invalid\" in " + a.out,
                  invalid.front().message));
}

// The sweep's scenarios as the document step needs them.
struct SweepScenarios {
  const sweep::ScenarioSpace& space;
  const sweep::ScenarioAt& scenario_at;
  const std::vector<std::size_t>& running;
  const std::vector<sweep::IgnoredAxes>& ignored;
};

// The documents, written result by result in scenario order: from the texts made as the results
// arrived, else from the partial file, or under MPI from the gathered results.
void write_documents(const SweepArgs& a, const SweepScenarios& sc, sweep::RankOutcome& all,
                     const std::vector<std::uint64_t>& line_offset, const std::string& partial_path,
                     bool gathered, ScratchRows* doc_rows, ScratchRows* csv_rows) {
  json axes_json = json::object();
  for (const auto& ax : sc.space.axes()) axes_json[ax.flag.substr(2)] = ax.values;
  std::ifstream partial;
  if (!gathered) partial.open(partial_path, std::ios::binary);
  const auto result_json = [&](std::size_t i) -> json {
    if (gathered) {
      if (!all.results[i])
        throw std::runtime_error("internal: a sweep result is missing after the gather");
      return to_json(*std::exchange(all.results[i], std::nullopt));
    }
    if (line_offset[i] == 0) throw std::runtime_error("internal: a sweep result is missing");
    return sweep::partial_result_at(partial, line_offset[i]);
  };
  std::optional<AtomicFile> out_file, csv_file;
  if (!a.csv.empty()) csv_file.emplace(a.csv);
  if (!a.out.empty()) out_file.emplace(a.out);
  const auto write_doc = [&](std::string_view text) {
    if (out_file)
      out_file->write(text);
    else if (a.json)
      std::fwrite(text.data(), 1, text.size(), stdout);
  };
  // Without --out or --json, a table goes to standard output: a column per axis of more than one
  // value.
  std::optional<report::TerminalTable> table;
  std::vector<std::size_t> table_axes;
  if (!a.json && a.out.empty()) {
    std::vector<std::string> names;
    for (std::size_t k = 0; k < sc.space.axes().size(); ++k)
      if (sc.space.axes()[k].values.size() > 1) {
        table_axes.push_back(k);
        names.push_back(sc.space.axes()[k].flag.substr(2));
      }
    table.emplace(std::move(names));
  }
  sweep::SweepDocumentStream doc(axes_json, all.invalid, sc.scenario_at, write_doc,
                                 sweep::ignored_axes_json(sc.ignored));
  if (csv_file) csv_file->write(report::csv_header());
  std::size_t next_invalid = 0;
  for (const std::size_t i : sc.running) {
    if (next_invalid < all.invalid.size() && all.invalid[next_invalid].index == i) {
      ++next_invalid;
      continue;
    }
    if (doc_rows && doc_rows->has(i) && (!csv_file || (csv_rows && csv_rows->has(i)))) {
      // The result's text and CSV row as they were made with its line: no parse. Only a result
      // whose numbers are all finite has its text there; any other takes the checked way below.
      doc.add_indented(doc_rows->row(i));
      if (csv_file) csv_file->write(csv_rows->row(i));
      continue;
    }
    const json result = result_json(i);
    require_finite_result(result, "the sweep's results");
    doc.add(result);
    if (!csv_file && !table) continue;
    const report::ResultView view =
        report::view_of(step_result_from_json(JsonReader(result, partial_path)));
    if (csv_file) csv_file->write(report::csv_row(view));
    if (table) {
      const std::vector<std::size_t> digits = sc.space.digits(i);
      std::vector<std::string> values;
      values.reserve(table_axes.size());
      for (const std::size_t k : table_axes) values.push_back(sc.space.axes()[k].values[digits[k]]);
      table->add(values, view);
    }
  }
  doc.finish();
  if (table) {
    const std::string text = table->render();
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (csv_file) csv_file->commit();
  if (out_file) out_file->commit();
}

void run_sweep_command(SweepArgs& a) {
  if (a.out == "-") a.json = true, a.out.clear();  // the document on standard output
  const std::vector<sweep::Axis> axes = listed_axes(a);
  const sweep::ScenarioSpace space(Scenario{}, axes);
  const sweep::ScenarioAt scenario_at = [&space](std::size_t i) { return space.at(i); };
  check_sweep_flags(a, axes);
  begin_work();

  sweep::MpiSession session;
  const sweep::World& world = session.world();
  const std::size_t total = space.size();
  // Scenarios that differ only on axes their strategy ignores run once (ScenarioSpace::runs).
  const std::vector<std::size_t> running = space.running_indices();
  const std::vector<sweep::IgnoredAxes> ignored = space.ignored();
  if (world.rank == 0) report_ignored(ignored);
  std::optional<ScratchFile> scratch;
  const sweep::RunOptions opt = run_options(a, world, scratch);
  RankRun run = run_rank_share(total, scenario_at, running, world, opt, !a.csv.empty(),
                               !a.json && a.out.empty());
  sweep::RankOutcome all =
      world.size > 1 ? sweep::gather_outcomes(run.outcome, total, world) : std::move(run.outcome);
  if (world.rank != 0) return;  // rank 0 reports and writes
  if (all.error_code == 2) throw InputError(all.error_file, all.error_path, all.error_rule);
  if (all.error_code != 0) throw std::runtime_error(all.error_message);

  const std::size_t written = running.size() - all.invalid.size();
  for (const auto& v : all.invalid)
    std::fprintf(stderr, "zerosim sweep: scenario #%zu (%s) not run: %s\n", v.index,
                 sweep::scenario_label(space.at(v.index)).c_str(), v.message.c_str());
  if (written == 0) throw invalid_error(a, all.invalid, running.size());  // nothing to write
  write_documents(a, {space, scenario_at, running, ignored}, all, run.line_offset, opt.partial_path,
                  world.size > 1, run.doc_rows.get(), run.csv_rows.get());
  if (!a.out.empty()) {
    std::error_code ec;
    for (const auto& f : sweep::partial_files_for(a.out)) fs::remove(f, ec);
  }
  std::fprintf(stderr, "zerosim sweep: %zu scenarios%s%s%s%s\n", written,
               a.out.empty() ? "" : ", JSON ", a.out.c_str(), a.csv.empty() ? "" : ", CSV ",
               a.csv.c_str());
  if (!all.invalid.empty()) throw invalid_error(a, all.invalid, running.size());
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
                        "comma-separated list: " + scenario_param_help(p, p.required))
            ->required(p.required)  // as `simulate` requires them: no silent cluster or model
            ->type_name((range.empty() ? scenario_param_type(p) : range) + ",...");
  }
  cmd->add_option(
      "--out", args->out,
      "sweep JSON output (atomic; OUT.partial keeps finished results meanwhile); '-': "
      "standard output, like --json. Without either, a table of the results is printed");
  cmd->add_flag("--json", args->json,
                "print the sweep's JSON document on standard output instead of the table");
  cmd->add_option("--csv", args->csv, "CSV output (atomic)");
  cmd->add_option("--threads", args->threads,
                  "worker threads per process (default: all cores / ranks per host)")
      ->check(int_range(0, 4096));
  cmd->add_flag("--resume", args->resume,
                "reuse the finished results of an interrupted sweep (OUT.partial)");
  cmd->callback([args] { run_sweep_command(*args); });
}

}  // namespace zerosim::cli
