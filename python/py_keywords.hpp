// Keyword arguments of the module's functions: each scenario parameter of the schema
// (sim/step/scenario_schema.hpp) is a keyword named as its flag with '_' for '-' (--nics-per-node:
// nics_per_node) and a Python type (int, float, str or os.PathLike, bool). A value of the wrong
// type or out of range is a ValueError in Python's words ("nodes must be an int in 1..1048576,
// got '2'"); the values that pass are handed to the schema as the CLI's text, so every other rule
// is the CLI's. The Python functions themselves (their signatures and docstrings) are generated
// from the same table (py_signatures.hpp).
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <vector>

#include "sim/step/scenario_schema.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::python {

namespace py = pybind11;

// "--nics-per-node" -> "nics_per_node", and back.
std::string keyword_of(std::string_view flag);
std::string flag_of(std::string_view keyword);
// Every "--flag-name" in a message as "flag_name" (the CLI's rules, said of keywords).
std::string keywords_in(const std::string& text);
// An InputError's text (InputError::what(): "FILE: PATH: RULE") in Python's words: said of a
// flag, the keyword and its rule ("<command line>: --nodes: must be at least 1" -> "nodes must be
// at least 1"); said of a file, its own message (file, JSON path, rule) with keywords for flags.
std::string python_message(const std::string& input_error_text);

// repr(v); an int that is not a bool; an int in lo..hi (else ValueError: "kw must be an int in
// lo..hi, got REPR").
std::string repr_of(py::handle v);
bool is_int(py::handle v);
long long int_in(py::handle v, const std::string& kw, long long lo, long long hi);

// The CLI text of value `v` of parameter `p` (keyword `kw`); ValueError when its type or range is
// not the parameter's.
std::string value_text(const ScenarioParam& p, const std::string& kw, py::handle v);

// The sweep axes of keyword arguments (None: not given, the default). A list or tuple is an axis
// of several values where `lists` is true, and a ValueError naming `function` otherwise.
std::vector<sweep::Axis> axes_of(const py::dict& kwargs, bool lists, const char* function);

// The one scenario of the keywords of `function` (simulate, plan), each value applied as `zerosim
// simulate` reads its flags (a value its strategy cannot use is an error, not ignored as in a
// sweep).
Scenario scenario_of(const py::dict& kwargs, const char* function);

}  // namespace zerosim::python
