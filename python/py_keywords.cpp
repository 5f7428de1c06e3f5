// Python values as the scenario schema's text, checked for their Python type and range first.
#include "python/py_keywords.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <stdexcept>
#include <variant>

#include "sim/core/closest_match.hpp"

namespace zerosim::python {

std::string keyword_of(std::string_view flag) {
  std::string kw(flag.substr(flag.rfind("--", 0) == 0 ? 2 : 0));
  for (char& c : kw)
    if (c == '-') c = '_';
  return kw;
}

std::string flag_of(std::string_view keyword) {
  std::string flag = "--" + std::string(keyword);
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string keywords_in(const std::string& text) {
  static const std::regex flag(R"(--([a-z][a-z0-9]*(-[a-z0-9]+)*))");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    out += keyword_of((*it)[0].str());
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return out;
}

std::string python_message(const std::string& input_error_text) {
  static constexpr std::string_view kCommandLine = "<command line>: --";
  const std::string_view text = input_error_text;
  const std::size_t colon = text.find(": ", kCommandLine.size());
  if (text.rfind(kCommandLine, 0) != 0 || colon == std::string_view::npos)
    return keywords_in(input_error_text);
  const std::string rule = keywords_in(std::string(text.substr(colon + 2)));
  return keyword_of(text.substr(kCommandLine.size() - 2, colon - (kCommandLine.size() - 2))) +
         (rule.rfind("must", 0) == 0 ? " " : ": ") + rule;
}

std::string repr_of(py::handle v) { return py::repr(v).cast<std::string>(); }

bool is_int(py::handle v) { return py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v); }

long long int_in(py::handle v, const std::string& kw, long long lo, long long hi) {
  if (is_int(v)) {
    const py::int_ i = py::reinterpret_borrow<py::int_>(v);
    if (i >= py::int_(lo) && i <= py::int_(hi)) return v.cast<long long>();
  }
  throw py::value_error(fmt::format("{} must be an int in {}..{}, got {}", kw, lo, hi, repr_of(v)));
}

namespace {

std::string int_text(const ScenarioParam& p, const std::string& kw, py::handle v) {
  return std::to_string(
      int_in(v, kw, static_cast<long long>(p.min), static_cast<long long>(p.max)));
}

std::string float_text(const ScenarioParam& p, const std::string& kw, py::handle v) {
  if (is_int(v) || py::isinstance<py::float_>(v)) {
    const double x = v.cast<double>();
    if (std::isfinite(x) && x >= p.min && x <= p.max) return fmt::format("{}", x);
  }
  throw py::value_error(
      fmt::format("{} must be a number in {:g}..{:g}, got {}", kw, p.min, p.max, repr_of(v)));
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + ("'" + choices[i] + "'");
  return out;
}

std::string str_text(const ScenarioParam& p, const std::string& kw, py::handle v) {
  const py::object os = py::module_::import("os");
  std::string text;
  if (py::isinstance<py::str>(v))
    text = v.cast<std::string>();
  else if (py::isinstance(v, os.attr("PathLike")))
    text = py::str(os.attr("fspath")(v)).cast<std::string>();
  else
    throw py::value_error(fmt::format("{} must be a str{}, got {}", kw,
                                      p.choices.empty() ? " or a path" : "", repr_of(v)));
  if (!p.choices.empty() && std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end())
    throw py::value_error(fmt::format("{} must be {}, got {}{}", kw, choices_text(p.choices),
                                      repr_of(v), did_you_mean(text, p.choices)));
  return text;
}

}  // namespace

std::string value_text(const ScenarioParam& p, const std::string& kw, py::handle v) {
  switch (scenario_param_kind(p)) {
    case ParamKind::Int:
      return int_text(p, kw, v);
    case ParamKind::Float:
      return float_text(p, kw, v);
    case ParamKind::Text:
      return str_text(p, kw, v);
    case ParamKind::Bool:
      if (!py::isinstance<py::bool_>(v))
        throw py::value_error(fmt::format("{} must be True or False, got {}", kw, repr_of(v)));
      return v.cast<bool>() ? "true" : "false";
  }
  throw std::logic_error("value_text: a parameter kind without a case");
}

std::vector<sweep::Axis> axes_of(const py::dict& kwargs, bool lists, const char* function) {
  std::vector<sweep::Axis> axes;
  for (const auto& [k, v] : kwargs) {
    if (v.is_none()) continue;
    const std::string kw = k.cast<std::string>();
    const ScenarioParam* p = find_scenario_param(flag_of(kw));
    if (p == nullptr)
      throw py::type_error(
          fmt::format("{}() got an unexpected keyword argument '{}'", function, kw));
    sweep::Axis axis{p->flag, {}};
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      if (!lists)
        throw py::value_error(fmt::format(
            "{} takes one value in {}(), got {} (sweep() takes lists)", kw, function, repr_of(v)));
      if (py::len(v) == 0) throw py::value_error(fmt::format("{} is an empty list", kw));
      for (const auto& item : v) axis.values.push_back(value_text(*p, kw, item));
    } else {
      axis.values.push_back(value_text(*p, kw, v));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

Scenario scenario_of(const py::dict& kwargs, const char* function) {
  const sweep::ScenarioSpace checked(Scenario{}, axes_of(kwargs, false, function));
  Scenario scenario;
  for (const sweep::Axis& axis : checked.axes())
    sweep::apply_flag(scenario, axis.flag, axis.values.front());
  return scenario;
}

}  // namespace zerosim::python
