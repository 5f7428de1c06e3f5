// 'zerosim calibrate': the CPU side of calibration.
//   fit MEAS... --out PROFILE [--base NAME|FILE]   measurements -> cost profile, with each point's
//   fit error import-nccl-tests LOG... [--op OP] [--ranks N] [--nodes Y] [--in-place] --out MEAS
//       nccl-tests logs (text or -J JSON, one or several collectives each) or `zerosim collective
//       --json` output -> measurements; --op keeps only that op's rows
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/measurements.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/validators.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/core/units.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::cli {

namespace {

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += " " + x;
  return s;
}

struct FitArgs {
  std::vector<std::string> files;
  std::string out, base, name, cluster, nccl_version, loss = "cauchy";
  bool quiet = false;
};

void run_fit(const FitArgs& a) {
  const calib::CollectiveLoss loss = calib::parse_collective_loss(a.loss);
  std::vector<FlagPath> inputs = {data_input("--base", "calibrate/profiles", a.base),
                                  data_input("--cluster", "topologies", a.cluster)};
  for (const auto& f : a.files) inputs.push_back({"MEAS", f});
  check_output_paths(inputs, {{"--out", a.out}});
  begin_work();
  calib::Measurements m;
  for (const auto& f : a.files) calib::load_measurements(f, m);
  CostProfile base;
  if (!a.base.empty()) {
    base = select_cost_profile_for_gpu(a.base, "");
  } else {
    std::string model;
    for (const auto& prov : m.provenance)
      if (prov.contains("gpu_model") && prov["gpu_model"].is_string() &&
          !prov["gpu_model"].get<std::string>().empty()) {
        model = prov["gpu_model"].get<std::string>();
        break;
      }
    if (model.empty())
      throw flag_error(
          "--base", "required: the measurement files do not name a gpu_model in their provenance");
    try {
      base = select_cost_profile_for_gpu("", model);
    } catch (const InputError&) {
      throw flag_error(
          "--base",
          fmt::format("required: no shipped cost profile matches the measurements' gpu_model '{}'",
                      model));
    }
  }
  if (!a.nccl_version.empty()) {
    base.nccl.version = a.nccl_version;
    base.nccl.version_code = nccl_version_code(a.nccl_version);
    if (base.nccl.version_code < 20700 || base.nccl.version_code >= 30000)
      throw flag_error(
          "--nccl-version",
          fmt::format("must be an NCCL release 2.7 or later as MAJOR.MINOR[.PATCH], got '{}'",
                      a.nccl_version));
  }
  calib::FitOptions opt;
  opt.loss = loss;
  // Progress on stderr (stdout carries the results): where the search stands, with the time spent.
  const auto started = std::chrono::steady_clock::now();
  opt.progress = [started](const std::string& line) {
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - started;
    std::fprintf(stderr, "%s (%.1f s)\n", line.c_str(), spent.count());
  };
  opt.cluster = a.cluster;
  opt.name = a.name;
  opt.command = fmt::format(
      "zerosim calibrate fit{} --out {}{}{}{}{} --loss {}", join(a.files), a.out,
      a.base.empty() ? "" : " --base " + a.base, a.name.empty() ? "" : " --name " + a.name,
      a.cluster.empty() ? "" : " --cluster " + a.cluster,
      a.nccl_version.empty() ? "" : " --nccl-version " + a.nccl_version, a.loss);
  calib::FitResult r = calib::fit_profile(m, base, opt);
  r.profile.provenance["fitted_on"] = utc_now();
  // Validate what we are about to write with the same strict parser every reader uses.
  json out = to_json(r.profile);
  parse_cost_profile(out, a.out);
  if (!a.quiet) {
    std::printf("%-44s %-28s %14s %12s %12s %8s\n", "fit", "record", "bytes|flops", "measured",
                "predicted", "error");
    for (const auto& p : r.points)
      std::printf("%-44s %-28s %14.6g %12s %12s %+7.2f%%\n", p.what.c_str(), p.where.c_str(), p.x,
                  format_time(p.measured_s).c_str(), format_time(p.predicted_s).c_str(),
                  p.rel_err() * 100);
  }
  for (const auto& s : r.summary) std::printf("%s\n", s.c_str());
  write_file_atomic(a.out, out.dump(2) + "\n");
  std::printf("wrote %s (profile '%s', base '%s')\n", a.out.c_str(), r.profile.name.c_str(),
              base.name.c_str());
}

struct ImportArgs {
  std::vector<std::string> logs;
  std::string op, out;
  int ranks = 0, nodes = 0;
  bool in_place = false;
};

void run_import(const ImportArgs& a) {
  std::vector<FlagPath> inputs;
  for (const auto& f : a.logs) inputs.push_back({"LOG", f});
  check_output_paths(inputs, {{"--out", a.out}});
  if (!a.op.empty()) parse_coll_kind(a.op, "--op");  // throws InputError naming --op
  begin_work();
  calib::NcclTestsOptions opt{a.op, a.ranks, a.nodes, a.in_place};
  std::vector<calib::CollectiveRecord> records;
  json logs = json::array();
  std::vector<std::string> ops, models, notes;
  for (const auto& path : a.logs) {
    calib::NcclTestsLog log = calib::load_nccl_tests(path, opt);
    json sections = json::array();
    std::vector<std::string> log_ops;
    for (const auto& s : log.sections) {
      if (s.rows == 0) continue;
      sections.push_back({{"test", s.test},
                          {"op", s.op},
                          {"where", s.where},
                          {"rows", s.rows},
                          {"ranks", s.ranks},
                          {"nodes", s.nodes},
                          {"gpus_per_node", s.gpus_per_node}});
      for (auto* v : {&log_ops, &ops})
        if (std::find(v->begin(), v->end(), s.op) == v->end()) v->push_back(s.op);
    }
    json l = {{"file", path},
              {"rows", log.records.size()},
              {"ranks", log.records.front().ranks},
              {"nodes", log.records.front().nodes},
              {"ops", log_ops},
              {"sections", sections},
              {"gpu_model", log.gpu_model}};
    if (!log.device.empty()) l["device"] = log.device;
    if (!log.header.empty()) l["header"] = log.header;
    if (!log.hosts.empty()) l["hosts"] = log.hosts;
    if (!log.notes.empty()) l["notes"] = log.notes;
    logs.push_back(l);
    models.push_back(log.gpu_model);
    notes.insert(notes.end(), log.notes.begin(), log.notes.end());
    records.insert(records.end(), log.records.begin(), log.records.end());
  }
  json prov = {{"source", "nccl-tests"},
               {"op", a.op.empty() ? "all" : a.op},
               {"ops", ops},
               {"columns", a.in_place ? "in-place" : "out-of-place"},
               {"logs", logs},
               {"imported_on", utc_now()},
               {"command", fmt::format("zerosim calibrate import-nccl-tests{}{}{}{}{} --out {}",
                                       join(a.logs), a.op.empty() ? "" : " --op " + a.op,
                                       a.ranks ? fmt::format(" --ranks {}", a.ranks) : "",
                                       a.nodes ? fmt::format(" --nodes {}", a.nodes) : "",
                                       a.in_place ? " --in-place" : "", a.out)}};
  // The GPU every log agrees on names the base profile `calibrate fit` starts from.
  if (!models.empty() && !models.front().empty() &&
      std::all_of(models.begin(), models.end(),
                  [&](const std::string& m) { return m == models.front(); }))
    prov["gpu_model"] = models.front();
  std::string text = calib::measurements_header(prov) + "\n";
  for (const auto& r : records) text += calib::to_json(r).dump() + "\n";
  write_file_atomic(a.out, text);
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  std::string what;
  if (ops.size() == 1) {
    what = ops.front() + " records";
  } else {
    std::vector<std::string> per_op;
    per_op.reserve(ops.size());
    for (const auto& op : ops)
      per_op.push_back(fmt::format("{} {}", op,
                                   std::count_if(records.begin(), records.end(),
                                                 [&](const auto& r) { return r.op == op; })));
    what = fmt::format("records ({})", fmt::join(per_op, ", "));
  }
  std::printf("wrote %s: %zu %s from %zu log(s)%s\n", a.out.c_str(), records.size(), what.c_str(),
              a.logs.size(),
              prov.contains("gpu_model")
                  ? fmt::format(", gpu_model {}", prov["gpu_model"].get<std::string>()).c_str()
                  : "");
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto* cal = app.add_subcommand("calibrate",
                                 "fit cost profiles from measurements; import nccl-tests logs");
  cal->require_subcommand(1);

  auto fa = std::make_shared<FitArgs>();
  auto* fit = cal->add_subcommand(
      "fit", "measurements (zerosim-calibrate or import-nccl-tests) -> cost profile");
  fit->add_option("MEAS", fa->files, "measurement files (JSON lines)")->required();
  fit->add_option("--out", fa->out, "cost profile to write (atomically)")->required();
  fit->add_option(
      "--base", fa->base,
      "profile NAME|FILE giving the parameters that are not measured (default: the shipped profile "
      "matching the measurements' gpu_model)");
  fit->add_option("--name", fa->name, "name of the new profile (default: <base>-measured)");
  fit->add_option("--cluster", fa->cluster,
                  "cluster preset or topology file the collective records ran on (each record is "
                  "simulated on it with the record's node count)");
  fit->add_option("--nccl-version", fa->nccl_version,
                  "NCCL release of the measurements (default: the base profile's), e.g. 2.21");
  fit->add_option(
      "--loss", fa->loss,
      "how the collective records' relative time errors weigh: cauchy (default; records "
      "far from the model, beyond 10%, weigh less) or squared (least squares)");
  fit->add_flag("--quiet", fa->quiet, "print only the summary, not each point's error");
  fit->callback([fa] { run_fit(*fa); });

  auto ia = std::make_shared<ImportArgs>();
  auto* imp = cal->add_subcommand(
      "import-nccl-tests",
      "nccl-tests logs (text or -J JSON) or `zerosim collective --json` -> measurements");
  imp->add_option("LOG", ia->logs, "nccl-tests output files")->required();
  imp->add_option(
      "--op", ia->op,
      "keep only this op's rows: all_gather|reduce_scatter|all_reduce|all_to_all|send_recv "
      "(default: "
      "every op; rows no '# Collective test starting:' line names take it from --op, else from the "
      "file name)");
  imp->add_option("--ranks", ia->ranks,
                  "ranks of the run (default: counted from the log's Rank lines)")
      ->check(int_range(1));
  imp->add_option("--nodes", ia->nodes,
                  "nodes of the run (default: distinct hosts in the log, else 1)")
      ->check(int_range(1));
  imp->add_flag("--in-place", ia->in_place, "take the in-place columns instead of out-of-place");
  imp->add_option("--out", ia->out, "measurement file to write (atomically)")->required();
  imp->callback([ia] { run_import(*ia); });
}

}  // namespace zerosim::cli
