#include "sim/sweep/run_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/core/finite_json.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_io.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::sweep {

namespace fs = std::filesystem;

std::vector<std::pair<std::size_t, StepResult>> read_partial(
    const std::string& path, const std::vector<Scenario>& scenarios) {
  std::istringstream in(read_input_file(path));  // a regular file, never a FIFO
  std::vector<std::pair<std::size_t, StepResult>> out;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    json entry;
    try {
      entry = json::parse(line);
    } catch (const json::exception&) {  // syntax error or a number out of range (1e400)
      if (in.peek() == std::char_traits<char>::eof()) break;  // last line cut by an interrupt
      throw InputError(path, fmt::format("line {}", line_no),
                       "malformed JSON line in the middle of the file");
    }
    if (line_no == 1) {
      if (!entry.is_object() || entry.value("kind", json()) != "sweep-partial")
        throw InputError(path, "line 1",
                         "not a zerosim sweep partial file (kind must be 'sweep-partial')");
      continue;
    }
    JsonReader r(entry, path, fmt::format("line {}", line_no));
    r.require_object({"index", "scenario", "result"});
    auto index = static_cast<std::size_t>(r.at("index").get_int_at_least(0));
    if (index >= scenarios.size() || r.at("scenario").value() != scenario_to_json(scenarios[index]))
      throw InputError(
          path, fmt::format("line {}/scenario", line_no),
          "this partial file was written by a different sweep (scenario does not match the "
          "command's scenario at that index); remove it or run without --resume");
    out.emplace_back(index, step_result_from_json(r.at("result")));
  }
  return out;
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

json sweep_document(const json& axes, const std::vector<StepResult>& results,
                    const std::vector<Scenario>& scenarios,
                    const std::vector<InvalidScenario>& invalid) {
  json doc;
  doc["schema_version"] = kResultSchemaVersion;
  doc["kind"] = "sweep";
  doc["axes"] = axes;
  json& list = doc["results"] = json::array();
  auto& array = list.get_ref<json::array_t&>();
  array.reserve(results.size());
  for (const StepResult& r : results) array.push_back(to_json(r));
  if (!invalid.empty()) {
    json& bad = doc["invalid"] = json::array();
    for (const InvalidScenario& v : invalid)
      bad.push_back({{"index", v.index},
                     {"scenario", scenario_to_json(scenarios.at(v.index))},
                     {"error", v.message}});
  }
  return doc;
}

std::vector<std::optional<StepResult>> run_scenarios(const std::vector<Scenario>& scenarios,
                                                     const std::vector<std::size_t>& indices,
                                                     const ScenarioRunner& runner,
                                                     const RunOptions& options) {
  std::vector<std::optional<StepResult>> results(scenarios.size());
  std::vector<char> wanted(scenarios.size(), 0);
  for (auto i : indices) {
    if (i >= scenarios.size()) throw std::out_of_range("sweep index out of range");
    wanted[i] = 1;
  }
  for (const auto& file : options.resume_from)
    for (auto& [i, r] : read_partial(file, scenarios))
      if (wanted[i]) results[i] = std::move(r);

  std::vector<std::size_t> todo;
  for (auto i : indices)
    if (!results[i]) todo.push_back(i);

  std::ofstream partial;
  if (!options.partial_path.empty()) {
    // Resumed results are copied into the fresh partial file so it stays complete on its own. The
    // copy replaces the old file atomically (a kill at any moment leaves one complete partial
    // file), and new results are then appended to it one line at a time.
    std::string head = json{{"kind", "sweep-partial"},
                            {"schema_version", kResultSchemaVersion},
                            {"total", scenarios.size()}}
                           .dump() +
                       '\n';
    for (auto i : indices)
      if (results[i])
        head += json{{"index", i},
                     {"scenario", scenario_to_json(scenarios[i])},
                     {"result", to_json(*results[i])}}
                    .dump() +
                '\n';
    write_file_atomic(options.partial_path, head);
    partial.open(options.partial_path, std::ios::binary | std::ios::app);
    if (!partial)
      throw InputError(options.partial_path, "", "partial results file is not writable");
  }

  std::mutex mu;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::size_t done = indices.size() - todo.size();
  std::vector<std::exception_ptr> errors(scenarios.size());
  if (options.progress) options.progress(done, indices.size());

  auto worker = [&] {
    SimContext context(options.modes);  // this thread's caches
    while (!stop.load()) {
      std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      std::size_t i = todo[k];
      try {
        StepResult r = runner(scenarios[i], context);
        // The line json{{"index", i}, {"result", r}, {"scenario", ...}}.dump() would write (keys in
        // that order), assembled from the parts' texts outside the lock.
        std::string line;
        if (partial.is_open()) {
          const json result = to_json(r);
          // The partial file never holds a number --resume would refuse (JSON null).
          require_finite_result(result, "the result of " + scenario_label(scenarios[i]));
          line = fmt::format("{{\"index\":{},\"result\":{},\"scenario\":{}}}\n", i, result.dump(),
                             scenario_to_json(scenarios[i]).dump());
        }
        std::lock_guard lock(mu);
        if (partial.is_open()) {
          partial << line;
          partial.flush();
        }
        results[i] = std::move(r);
        ++done;
        if (options.progress) options.progress(done, indices.size());
      } catch (const InputError& e) {
        std::lock_guard lock(mu);
        if (options.invalid) {
          options.invalid->push_back({i, e.what()});
          ++done;
          if (options.progress) options.progress(done, indices.size());
        } else {
          errors[i] = std::current_exception();
          stop = true;
        }
      } catch (...) {
        std::lock_guard lock(mu);
        errors[i] = std::current_exception();
        stop = true;
      }
    }
  };
  int n = std::min<int>(resolve_threads(options.threads, 1),
                        static_cast<int>(std::max<std::size_t>(1, todo.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  // Threads finish in any order; the list is by scenario.
  if (options.invalid)
    std::sort(options.invalid->begin(), options.invalid->end(),
              [](const InvalidScenario& a, const InvalidScenario& b) { return a.index < b.index; });

  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    std::string where = fmt::format("sweep scenario #{} ({})", i, scenario_label(scenarios[i]));
    try {
      std::rethrow_exception(errors[i]);
    } catch (const InputError& e) {
      throw InputError(e.file(), e.path(), e.rule() + " [in " + where + "]");
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string(e.what()) + " [in " + where + "]");
    }
  }
  return results;
}

}  // namespace zerosim::sweep
