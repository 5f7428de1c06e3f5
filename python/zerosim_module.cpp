// The `zerosim` Python module: simulate(), sweep(), plan(), collective() and report() over the
// C++ library, with typed keyword-only signatures and docstrings generated from the scenario
// schema (py_signatures.hpp), typed result objects with docstrings and __repr__ that convert to
// dicts and pandas DataFrames (bind_results.cpp), and errors in Python's words: a bad keyword
// value is a ValueError naming the keyword ("nodes must be an int in 1..1048576, got '2'"), a
// missing or unknown keyword a TypeError, a bad input file a ValueError naming the file, field and
// rule.
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <string>

#include "python/bindings.hpp"
#include "python/py_keywords.hpp"
#include "python/py_signatures.hpp"
#include "sim/core/error.hpp"
#include "sim/step/simulate.hpp"

namespace py = pybind11;
using namespace zerosim;

PYBIND11_MODULE(zerosim, m) {
  m.doc() =
      "zerosim: ZeRO-3 / ZeRO++ / FSDP training-step simulator and planner.\n\n"
      "simulate() one step, sweep() many, plan() a configuration, collective() one NCCL "
      "collective, report() results as Markdown, HTML or CSV. Keywords are the CLI's flags with "
      "'_' for '-'.";
  // pybind11's translator type takes the exception_ptr by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, python::python_message(e.what()).c_str());
    } catch (const OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
  python::bind_result_types(m);
  python::bind_sweep(m);
  python::bind_plan(m);
  python::bind_cli_commands(m);
  m.attr("RESULT_SCHEMA_VERSION") = kResultSchemaVersion;
  m.attr("__version__") = ZEROSIM_VERSION;
  m.def(
      "_simulate",
      [](const py::dict& kwargs) {
        const Scenario scenario = python::scenario_of(kwargs, "simulate");
        py::gil_scoped_release release;
        return simulate(scenario);
      },
      py::arg("kwargs"), "simulate()'s implementation: use simulate()");
  py::exec(python::wrapper_source(), m.attr("__dict__"));
}
