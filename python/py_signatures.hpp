// The module's public functions as Python source: keyword-only functions with typed annotations,
// defaults and docstrings, each calling its C++ implementation (`_simulate(locals())`...). So
// `help(zerosim.simulate)` and `inspect.signature` show every keyword with its type and default,
// and a missing required keyword (cluster, model) or an unknown one is Python's own TypeError.
// simulate() and sweep() are generated from the scenario schema (py_keywords.hpp), so they have
// the CLI's flags, help and defaults.
#pragma once
#include <string>

namespace zerosim::python {

// Python source defining simulate, sweep, plan, collective and report in the module's namespace
// (run with py::exec there, after the C++ implementations _simulate... are defined).
std::string wrapper_source();

}  // namespace zerosim::python
