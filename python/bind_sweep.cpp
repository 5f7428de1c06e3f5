// sweep(): the cartesian product of keyword lists run on a thread pool, as `zerosim sweep` runs
// it: a combination that is bad input (an hpZ group that does not divide the world...) is kept
// aside with its error and the others run on.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "python/bindings.hpp"
#include "python/py_keywords.hpp"
#include "python/py_types.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::python {

namespace {

py::list rows_of(const SweepResult& s) {
  py::list rows;
  for (const StepResult& r : s.results) rows.append(row_of(r));
  return rows;
}

py::list invalid_of(const SweepResult& s) {
  py::list out;
  for (std::size_t i = 0; i < s.invalid_scenarios.size(); ++i) {
    py::dict d;
    d["scenario"] = to_python(scenario_to_json(s.invalid_scenarios[i]));
    d["error"] = s.invalid_errors[i];
    out.append(d);
  }
  return out;
}

SweepResult run(const py::dict& kwargs) {
  int threads = 0;
  py::dict axes;
  for (const auto& [k, v] : kwargs) {
    if (k.cast<std::string>() != "threads") {
      axes[k] = v;
      continue;
    }
    threads = static_cast<int>(int_in(v, "threads", 0, 4096));
  }
  const std::vector<Scenario> scenarios = sweep::expand(Scenario{}, axes_of(axes, true, "sweep"));
  std::vector<std::size_t> all(scenarios.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<sweep::InvalidScenario> invalid;
  std::vector<std::optional<StepResult>> results;
  {
    py::gil_scoped_release release;
    sweep::RunOptions options;
    options.threads = threads;
    options.invalid = &invalid;
    results = sweep::run_scenarios(scenarios, all, sweep::simulate_runner(), options);
  }
  SweepResult out;
  for (auto& r : results)
    if (r) out.results.push_back(std::move(*r));
  for (const auto& v : invalid) {
    out.invalid_scenarios.push_back(scenarios.at(v.index));
    out.invalid_errors.push_back(python_message(v.message));
  }
  return out;
}

}  // namespace

void bind_sweep(py::module_& m) {
  py::class_<SweepResult>(m, "SweepResult",
                          "A sweep's results in its order, and the combinations that were bad "
                          "input. It is a sequence of rows (dicts): pandas.DataFrame(result) "
                          "and result.to_dataframe() give one row per result")
      .def_readonly("results", &SweepResult::results, "the StepResults, in the sweep's order")
      .def_property_readonly("invalid", &invalid_of,
                             "the combinations not run: [{'scenario': {...}, 'error': '...'}]")
      .def_property_readonly("rows", &rows_of, "one flat row (a dict) per result")
      .def(
          "to_dataframe", [](const SweepResult& s) { return data_frame(rows_of(s)); },
          "the rows as a pandas.DataFrame")
      .def(
          "to_dict",
          [](const SweepResult& s) {
            py::dict d;
            py::list results;
            for (const StepResult& r : s.results) results.append(to_python(to_json(r)));
            d["results"] = results;
            d["invalid"] = invalid_of(s);
            return d;
          },
          "{'results': [each result's to_dict()], 'invalid': invalid}")
      .def("__len__", [](const SweepResult& s) { return s.results.size(); })
      .def("__getitem__",
           [](const SweepResult& s, std::ptrdiff_t i) {
             const auto n = static_cast<std::ptrdiff_t>(s.results.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("sweep row index out of range");
             return row_of(s.results[static_cast<std::size_t>(i)]);
           })
      .def("__iter__", [](const SweepResult& s) { return py::iter(rows_of(s)); })
      .def("__repr__", [](const SweepResult& s) {
        return fmt::format("SweepResult({} results, {} invalid)", s.results.size(),
                           s.invalid_scenarios.size());
      });
  m.def("_sweep", &run, py::arg("kwargs"), "sweep()'s implementation: use sweep()");
}

}  // namespace zerosim::python
