// The parts of the `zerosim` module (zerosim_module.cpp puts them together): result types,
// sweeps, plans, and the commands run through the CLI's own code (collective, report).
#pragma once
#include <pybind11/pybind11.h>

#include "sim/core/json_io.hpp"
#include "sim/result/step_result.hpp"

namespace zerosim::python {

namespace py = pybind11;

// A JSON value as Python objects (dict, list, str, int, float, bool, None).
py::object to_python(const json& value);
// The same, keeping the object's key order (a ds_config in DeepSpeed's documented order).
py::object to_python(const ordered_json& value);
// pandas.DataFrame(rows); ImportError saying how to install pandas when it is missing.
py::object data_frame(const py::list& rows);
// One flat row of a result (a dict): the scenario's axes and the metrics (a DataFrame row).
py::dict row_of(const StepResult& r);

// StepResult and the types of its fields, with docstrings and __repr__.
void bind_result_types(py::module_& m);
// SweepResult and _sweep (sweep()'s implementation).
void bind_sweep(py::module_& m);
// Plan, Candidate and _plan (plan()'s implementation).
void bind_plan(py::module_& m);
// _collective and _report: `zerosim collective` and `zerosim report` run in this process.
void bind_cli_commands(py::module_& m);

}  // namespace zerosim::python
