// collective() and report(): `zerosim collective --json` and `zerosim report` run in this process
// by the CLI's own code (sim/cli), so their rules, defaults and output are the CLI's. The keywords
// become flags ('_' for '-'), the output is written to a scratch folder and read back, and the
// CLI's errors are said of the keywords.
#include <fmt/format.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "python/bindings.hpp"
#include "python/py_keywords.hpp"
#include "python/py_types.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/plan/planner.hpp"
#include "sim/sweep/run_sweep.hpp"

namespace zerosim::python {

namespace {

using namespace pybind11::literals;

// A scratch folder, removed when done.
class Scratch {
 public:
  Scratch() : dir_(py::module_::import("tempfile").attr("mkdtemp")("", "zerosim-py-")) {}
  ~Scratch() {
    try {
      py::module_::import("shutil").attr("rmtree")(dir_, true);
    } catch (...) {  // NOLINT(bugprone-empty-catch): removing scratch files is best effort
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string path(const std::string& name) const {
    return py::str(dir_).cast<std::string>() + "/" + name;
  }

 private:
  py::object dir_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// What the process writes to stderr meanwhile, kept in a file; on destruction each line that does
// not name the scratch folder (the CLI's "wrote <scratch file>") goes to Python's sys.stderr.
class StderrNotes {
 public:
  explicit StderrNotes(std::string scratch) : scratch_(std::move(scratch)) {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = ::dup(STDERR_FILENO);
    if (file_ && saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~StderrNotes() {
    if (!file_ || saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    // A destructor must not throw: a note that cannot be passed to Python is dropped.
    try {
      pass_on();
    } catch (...) {  // nowhere left to report it
    }
    std::fclose(file_);
  }
  StderrNotes(const StderrNotes&) = delete;
  StderrNotes& operator=(const StderrNotes&) = delete;

 private:
  // Each line of the kept stderr that does not name the scratch folder, to Python's sys.stderr.
  void pass_on() {
    std::rewind(file_);
    std::string line;
    for (int c = std::fgetc(file_); c != EOF; c = std::fgetc(file_)) {
      line += static_cast<char>(c);
      if (c != '\n') continue;
      if (line.find(scratch_) == std::string::npos)
        py::print(line, "end"_a = "", "file"_a = py::module_::import("sys").attr("stderr"));
      line.clear();
    }
  }
  std::string scratch_;
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// `zerosim ARGS...` in this process; a parse error is a ValueError in the keywords' words. Its
// notes on stderr pass on, but for those naming scratch files.
void run_cli(const std::vector<std::string>& args, const Scratch& scratch) {
  const StderrNotes notes(scratch.path(""));
  py::gil_scoped_release release;
  CLI::App app{"zerosim"};
  app.require_subcommand(1);
  cli::register_commands(app);
  std::vector<const char*> argv = {"zerosim"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    py::gil_scoped_acquire acquire;
    throw py::value_error(keywords_in(e.what()));
  }
}

// A keyword's value as flag text: a str, a path, an int or a float.
std::string flag_text(const std::string& kw, py::handle v) {
  const py::object os = py::module_::import("os");
  if (py::isinstance<py::bool_>(v))
    throw py::value_error(fmt::format("{} must be a number or a str, got {}", kw, repr_of(v)));
  if (py::isinstance<py::int_>(v)) return std::to_string(v.cast<long long>());
  if (py::isinstance<py::float_>(v)) return fmt::format("{}", v.cast<double>());
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance(v, os.attr("PathLike")))
    return py::str(os.attr("fspath")(v)).cast<std::string>();
  throw py::value_error(fmt::format("{} must be a number or a str, got {}", kw, repr_of(v)));
}

py::object collective(const py::dict& kw) {
  std::vector<std::string> args = {"collective"};
  for (const auto& [k, v] : kw) {
    if (v.is_none()) continue;
    const std::string key = k.cast<std::string>();
    args.push_back(flag_of(key));
    args.push_back(flag_text(key, v));
  }
  const Scratch scratch;
  args.insert(args.end(), {"--json", "--out", scratch.path("collective.json")});
  run_cli(args, scratch);
  return to_python(parse_json_text(read_file(scratch.path("collective.json")), "collective"));
}

// The results document report() renders: a file as given, else one written from the objects.
std::string results_file(py::handle results, const Scratch& scratch) {
  const py::object os = py::module_::import("os");
  if (py::isinstance<py::str>(results) || py::isinstance(results, os.attr("PathLike")))
    return py::str(os.attr("fspath")(results)).cast<std::string>();
  json doc;
  if (py::isinstance<StepResult>(results)) {
    doc = to_json(results.cast<const StepResult&>());
  } else if (py::isinstance<Plan>(results)) {
    doc = plan::plan_document(results.cast<const Plan&>().result);
  } else {
    std::vector<StepResult> list;
    if (py::isinstance<SweepResult>(results)) {
      list = results.cast<const SweepResult&>().results;
    } else if (py::isinstance<py::list>(results) || py::isinstance<py::tuple>(results)) {
      for (const auto& r : results) {
        if (!py::isinstance<StepResult>(r))
          throw py::value_error(fmt::format("results must hold StepResults, got {}", repr_of(r)));
        list.push_back(r.cast<const StepResult&>());
      }
    } else {
      throw py::value_error(fmt::format(
          "results must be a results file, a StepResult, a list of them, a SweepResult or a "
          "Plan, got {}",
          repr_of(results)));
    }
    if (list.empty()) throw py::value_error("results is empty: nothing to report");
    doc = sweep::sweep_document(json::object(), list);
  }
  std::string path = scratch.path("results.json");
  write_text(path, doc.dump(1) + "\n");
  return path;
}

std::string report(py::handle results, const py::dict& kw) {
  const Scratch scratch;
  const std::string format = py::str(kw["format"]).cast<std::string>();
  if (!py::isinstance<py::str>(kw["format"]) ||
      (format != "md" && format != "html" && format != "csv"))
    throw py::value_error(
        fmt::format("format must be 'md', 'html' or 'csv', got {}", repr_of(kw["format"])));
  const std::string out = scratch.path("report." + format);
  std::vector<std::string> args = {
      "report", results_file(results, scratch), "--format", format, "--out", out};
  for (const char* k : {"train_tokens", "gpu_hour_price"})
    if (!kw[k].is_none()) args.insert(args.end(), {flag_of(k), flag_text(k, kw[k])});
  run_cli(args, scratch);
  return read_file(out);
}

}  // namespace

void bind_cli_commands(py::module_& m) {
  m.def("_collective", &collective, py::arg("kwargs"), "collective()'s implementation");
  m.def("_report", &report, py::arg("results"), py::arg("kwargs"), "report()'s implementation");
}

}  // namespace zerosim::python
