#include "sim/sweep/run_sweep.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/json_text.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::sweep {

namespace fs = std::filesystem;

void for_each_partial_result(const std::string& path, std::size_t total,
                             const ScenarioAt& scenario_at,
                             const std::function<void(std::size_t, StepResult&&)>& visit) {
  // A regular file, never a FIFO, read one line at a time.
  std::size_t line_no = 0;
  for_each_input_line(path, [&](std::string_view line, bool unterminated) {
    ++line_no;
    const std::string where = fmt::format("line {}", line_no);
    json entry;
    try {
      if (line.empty()) throw InputError(path, where, "an empty line");
      // Strict: syntax, numbers out of range (1e400), duplicate keys.
      entry = parse_json_text(line, path);
    } catch (const InputError& e) {
      if (unterminated) return;  // the last line cut by an interrupt before its newline
      throw InputError(path, where,
                       fmt::format("malformed JSON line ({}): the sweep writes one JSON object "
                                   "per line, and only a last line without its newline is an "
                                   "interrupted write",
                                   e.rule()));
    }
    if (line_no == 1) {
      if (!entry.is_object() || entry.value("kind", json()) != "sweep-partial")
        throw InputError(path, "line 1",
                         "not a zerosim sweep partial file (kind must be 'sweep-partial')");
      return;
    }
    JsonReader r(entry, path, fmt::format("line {}", line_no));
    r.require_object({"index", "scenario", "result"});
    auto index = static_cast<std::size_t>(r.at("index").get_int_at_least(0));
    if (index >= total || r.at("scenario").value() != scenario_to_json(scenario_at(index)))
      throw InputError(
          path, fmt::format("line {}/scenario", line_no),
          "this partial file was written by a different sweep (scenario does not match the "
          "command's scenario at that index); remove it or run without --resume");
    visit(index, step_result_from_json(r.at("result")));
  });
}

std::vector<std::pair<std::size_t, StepResult>> read_partial(
    const std::string& path, const std::vector<Scenario>& scenarios) {
  std::vector<std::pair<std::size_t, StepResult>> out;
  for_each_partial_result(
      path, scenarios.size(), [&](std::size_t i) { return scenarios[i]; },
      [&](std::size_t i, StepResult&& r) { out.emplace_back(i, std::move(r)); });
  return out;
}

json partial_result_at(std::ifstream& partial, std::uint64_t line_offset) {
  partial.clear();
  partial.seekg(static_cast<std::streamoff>(line_offset));
  std::string line;
  if (!std::getline(partial, line))
    throw std::runtime_error("the sweep's partial file lost a result it had written");
  return json::parse(line).at("result");
}

std::vector<std::string> partial_files_for(const std::string& out) {
  std::vector<std::string> files;
  fs::path target(out);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string prefix = target.filename().string() + ".partial";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name == prefix || name.starts_with(prefix + ".r")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

int resolve_threads(int requested, int local_ranks) {
  if (requested > 0) return requested;
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::max(1, hw) / std::max(1, local_ranks));
}

namespace {

// `text` with every line indented by `depth` spaces.
std::string indented(const std::string& text, std::size_t depth) {
  const std::string pad(depth, ' ');
  std::string out = pad;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// The scenario's parameters in key order, the order of scenario_to_json's text.
const std::vector<const ScenarioParam*>& params_by_key() {
  static const std::vector<const ScenarioParam*> params = [] {
    std::vector<const ScenarioParam*> list;
    for (const ScenarioParam& p : scenario_params()) list.push_back(&p);
    std::sort(list.begin(), list.end(),
              [](const ScenarioParam* a, const ScenarioParam* b) { return a->key < b->key; });
    return list;
  }();
  return params;
}

// scenario_to_json(scenario).dump() as the next value of `out`.
void write_scenario_text(JsonTextWriter& out, const Scenario& scenario) {
  out.begin_object();
  for (const ScenarioParam* p : params_by_key()) out.put(p->key, scenario_param_json(*p, scenario));
  out.end_object();
}

// The lines of a partial file: json{{"index", i}, {"result", to_json(r)}, {"scenario",
// scenario_to_json(scenario)}}.dump() and a newline, written without building the trees. One per
// thread.
class PartialLines {
 public:
  // `document`: each line's result is also written as the sweep document's list holds it.
  explicit PartialLines(bool document) : document_(document) {}
  // The line of scenario `index`'s result; `finite` is false when it holds a number that is not
  // finite (written null).
  const std::string& line(std::size_t index, const StepResult& r, const Scenario& scenario,
                          bool& finite) {
    text_.clear();
    text_.begin_object();
    text_.put("index", index);
    text_.key("result");
    if (document_) text_.begin_indented(kDocumentDepth);
    finite = results_.write(text_, r);
    if (document_) text_.end_indented();
    text_.key("scenario");
    write_scenario_text(text_, scenario);
    text_.end_object();
    finite = finite && text_.all_finite();
    text_.end_line();
    return text_.text();
  }
  // The last line's result as the sweep document's results list holds it (RunOptions::document).
  const std::string& document_text() const { return text_.indented(); }

 private:
  bool document_;
  JsonTextWriter text_;
  StepResultText results_;
};

}  // namespace

json ignored_axes_json(const std::vector<IgnoredAxes>& ignored) {
  json list = json::array();
  for (const IgnoredAxes& g : ignored)
    list.push_back(
        {{"strategy", g.strategy}, {"flags", g.flags}, {"scenarios_not_run", g.not_run}});
  return list;
}

json sweep_document(const json& axes, const std::vector<StepResult>& results,
                    const std::vector<Scenario>& scenarios,
                    const std::vector<InvalidScenario>& invalid) {
  std::string text;
  SweepDocumentStream doc(
      axes, invalid, [&](std::size_t i) { return scenarios.at(i); },
      [&](std::string_view piece) { text += piece; });
  for (const StepResult& r : results) doc.add(to_json(r));
  doc.finish();
  return json::parse(text);
}

SweepDocumentStream::SweepDocumentStream(const json& axes,
                                         const std::vector<InvalidScenario>& invalid,
                                         const ScenarioAt& scenario_at,
                                         std::function<void(std::string_view)> write,
                                         const json& ignored_axes)
    : write_(std::move(write)) {
  JsonTextWriter head;
  head.begin_object();
  head.put("axes", axes);
  if (!ignored_axes.empty()) head.put("ignored_axes", ignored_axes);
  if (!invalid.empty()) {
    head.key("invalid");
    head.begin_array();
    for (const InvalidScenario& v : invalid) {
      head.begin_object();
      head.put("error", v.message);
      head.put("index", v.index);
      head.key("scenario");
      write_scenario_text(head, scenario_at(v.index));
      head.end_object();
    }
    head.end_array();
  }
  head.put("kind", "sweep");
  head.key("results");
  head.begin_array();
  head.end_array();
  head.put("schema_version", kResultSchemaVersion);
  head.end_object();
  // The empty list's text splits the document into what comes before the results and what comes
  // after. A key inside a string value has its quotes escaped, so the last unescaped match is the
  // list's own.
  std::string text;
  append_indented_json(head.text(), 0, text);
  const std::string key = "\"results\": [";
  const std::size_t at = text.rfind(key + "]");
  if (at == std::string::npos) throw std::logic_error("sweep document without its results list");
  write_(std::string_view(text).substr(0, at + key.size()));
  tail_ = text.substr(at + key.size()) + "\n";
}

void SweepDocumentStream::add(const json& result) {
  // A list member sits at depth 2 of the document (indent 1 per level).
  write_(any_ ? ",\n" : "\n");
  write_(indented(result.dump(1), kDocumentDepth));
  any_ = true;
}

void SweepDocumentStream::add_indented(std::string_view text) {
  write_(any_ ? ",\n" : "\n");
  write_(text);
  any_ = true;
}

void SweepDocumentStream::finish() {
  if (any_) write_("\n ");
  write_(tail_);
}

namespace {

// The partial file new results are appended to (fd < 0: none) and its size in bytes, which is
// where the next line starts. A line that cannot be written whole (a full disk) is cut off again,
// so the file keeps whole lines only, each a result --resume reuses.
struct PartialFile {
  std::string path;
  int fd = -1;
  std::uint64_t written = 0;
  PartialFile() = default;
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile() {
    if (fd >= 0) ::close(fd);
  }
  bool is_open() const { return fd >= 0; }
  void open(const std::string& file) {
    path = file;
    fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
      throw OutputError(file, fmt::format("cannot open the partial results file to append: {}",
                                          std::strerror(errno)));
  }
  void append(std::string_view line) {
    errno = 0;
    if (write_all(fd, line)) {
      written += line.size();
      return;
    }
    const int err = errno != 0 ? errno : EIO;
    const bool cut = ::ftruncate(fd, static_cast<off_t>(written)) == 0;
    throw OutputError(
        path,
        fmt::format("appending to the partial results file failed: {}; {}", std::strerror(err),
                    cut ? "it keeps the whole results written before, for --resume"
                        : "its last line may be cut (--resume skips it)"));
  }
};

// Resumed results are copied into the fresh partial file so it stays complete on its own. The
// copy replaces the old file atomically (a kill at any moment leaves one complete partial file),
// and new results are then appended to it one line at a time. Returns the indices still to run.
std::vector<std::size_t> resume_results(std::size_t total, const ScenarioAt& scenario_at,
                                        const std::vector<std::size_t>& indices,
                                        const RunOptions& options, const ResultSink& sink,
                                        PartialFile& partial) {
  std::vector<char> pending(total, 0);  // 1: wanted and not resumed
  for (auto i : indices) {
    if (i >= total) throw std::out_of_range("sweep index out of range");
    pending[i] = 1;
  }
  std::optional<AtomicFile> fresh;
  const auto emit = [&](std::string_view text) {
    if (fresh) fresh->write(text);
    partial.written += text.size();
  };
  if (!options.partial_path.empty()) {
    fresh.emplace(options.partial_path);
    emit(json{{"kind", "sweep-partial"}, {"schema_version", kResultSchemaVersion}, {"total", total}}
             .dump() +
         '\n');
  }
  PartialLines lines(static_cast<bool>(options.document));
  for (const auto& file : options.resume_from)
    for_each_partial_result(file, total, scenario_at, [&](std::size_t i, StepResult&& r) {
      if (!pending[i]) return;
      pending[i] = 0;
      const std::uint64_t offset = partial.written;
      bool finite = true;
      if (fresh) {
        emit(lines.line(i, r, scenario_at(i), finite));
        if (options.document && finite) options.document(i, lines.document_text());
      }
      sink(i, std::move(r), fresh ? offset : 0);
    });
  std::vector<std::size_t> todo;
  for (auto i : indices)
    if (pending[i]) todo.push_back(i);
  if (fresh) {
    fresh->commit();
    fresh.reset();
    partial.open(options.partial_path);
  }
  return todo;
}

// The worker threads and what they share: they take the scenarios of `todo` in turn; `mu` guards
// the partial file, the sink, the count done and the lowest failing index with its error.
class ScenarioPool {
 public:
  ScenarioPool(const std::vector<std::size_t>& todo, std::size_t wanted, std::size_t total,
               const ScenarioAt& scenario_at, const ScenarioRunner& runner,
               const RunOptions& options, const ResultSink& sink, PartialFile& partial)
      : todo_(todo),
        wanted_(wanted),
        scenario_at_(scenario_at),
        runner_(runner),
        options_(options),
        sink_(sink),
        partial_(partial),
        done_(wanted - todo.size()),
        error_index_(total) {}

  // Runs every scenario of `todo` on up to options.threads threads (this one included), or until
  // one fails with an error that stops the run.
  void run() {
    if (options_.progress) options_.progress(done_, wanted_);
    int n = std::min<int>(resolve_threads(options_.threads, 1),
                          static_cast<int>(std::max<std::size_t>(1, todo_.size())));
    std::vector<std::thread> pool;
    for (int t = 1; t < n; ++t) pool.emplace_back([this] { work(); });
    work();
    for (auto& t : pool) t.join();
  }

  // The failure of the lowest failing scenario, with the scenario named; none: returns.
  void rethrow_first_error() const {
    if (!error_) return;
    std::string where = fmt::format("sweep scenario #{} ({})", error_index_,
                                    scenario_label(scenario_at_(error_index_)));
    try {
      std::rethrow_exception(error_);
    } catch (const InputError& e) {
      throw InputError(e.file(), e.path(), e.rule() + " [in " + where + "]");
    } catch (const OutputError&) {
      throw;
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string(e.what()) + " [in " + where + "]");
    }
  }

 private:
  // One thread's loop: a bad-input scenario is listed (options.invalid) or stops the run, as any
  // other failure does.
  void work() {
    SimContext context(options_.modes);  // this thread's caches
    PartialLines lines(static_cast<bool>(options_.document));
    while (!stop_.load()) {
      std::size_t k = next_.fetch_add(1);
      if (k >= todo_.size()) return;
      std::size_t i = todo_[k];
      try {
        run_one(i, context, lines);
      } catch (const InputError& e) {
        std::lock_guard lock(mu_);
        if (options_.invalid) {
          options_.invalid->push_back({i, e.what()});
          count_done();
        } else if (i < error_index_) {
          error_index_ = i;
          error_ = std::current_exception();
          stop_ = true;
        }
      } catch (...) {
        std::lock_guard lock(mu_);
        if (i < error_index_) {
          error_index_ = i;
          error_ = std::current_exception();
        }
        stop_ = true;
      }
    }
  }

  // Scenario i: simulated, its line appended to the partial file, its result handed to the sink.
  void run_one(std::size_t i, SimContext& context, PartialLines& lines) {
    const Scenario scenario = scenario_at_(i);
    StepResult r = runner_(scenario, context);
    // The line is assembled outside the lock.
    const std::string* line = nullptr;
    if (partial_.is_open()) {
      bool finite = true;
      line = &lines.line(i, r, scenario, finite);
      // The partial file never holds a number --resume would refuse (JSON null): the result's
      // tree names the number that is not finite.
      if (!finite) require_finite_result(to_json(r), "the result of " + scenario_label(scenario));
    }
    std::lock_guard lock(mu_);
    const std::uint64_t offset = partial_.written;
    if (line) {
      partial_.append(*line);
      if (options_.document) options_.document(i, lines.document_text());
    }
    sink_(i, std::move(r), offset);
    count_done();
  }

  void count_done() {  // under mu_
    ++done_;
    if (options_.progress) options_.progress(done_, wanted_);
  }

  const std::vector<std::size_t>& todo_;
  const std::size_t wanted_;  // the indices asked for, resumed ones included
  const ScenarioAt& scenario_at_;
  const ScenarioRunner& runner_;
  const RunOptions& options_;
  const ResultSink& sink_;
  PartialFile& partial_;
  std::mutex mu_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::size_t done_;
  std::size_t error_index_;  // the lowest failing index (total: none) and its error
  std::exception_ptr error_;
};

}  // namespace

void run_scenarios(std::size_t total, const ScenarioAt& scenario_at,
                   const std::vector<std::size_t>& indices, const ScenarioRunner& runner,
                   const RunOptions& options, const ResultSink& sink) {
  PartialFile partial;
  const std::vector<std::size_t> todo =
      resume_results(total, scenario_at, indices, options, sink, partial);
  ScenarioPool pool(todo, indices.size(), total, scenario_at, runner, options, sink, partial);
  pool.run();
  // Threads finish in any order; the list is by scenario.
  if (options.invalid)
    std::sort(options.invalid->begin(), options.invalid->end(),
              [](const InvalidScenario& a, const InvalidScenario& b) { return a.index < b.index; });
  pool.rethrow_first_error();
}

std::vector<std::optional<StepResult>> run_scenarios(const std::vector<Scenario>& scenarios,
                                                     const std::vector<std::size_t>& indices,
                                                     const ScenarioRunner& runner,
                                                     const RunOptions& options) {
  std::vector<std::optional<StepResult>> results(scenarios.size());
  run_scenarios(
      scenarios.size(), [&](std::size_t i) { return scenarios[i]; }, indices, runner, options,
      [&](std::size_t i, StepResult&& r, std::uint64_t) { results[i] = std::move(r); });
  return results;
}

}  // namespace zerosim::sweep
