#include "sim/core/yaml_io.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <regex>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/utf8.hpp"

namespace zerosim {

namespace {

// PyYAML's YAML 1.1 implicit types (resolver.py), for the forms configs use.
bool is_one_of(const std::string& v, std::initializer_list<const char*> forms) {
  for (const char* f : forms)
    if (v == f) return true;
  return false;
}

json scalar_value(const YAML::Node& n) {
  const std::string& v = n.Scalar();
  // A quoted scalar ("!") or an explicit !!str is a string whatever it spells.
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return v;
  if (is_one_of(v, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(v, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})) return true;
  if (is_one_of(v, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}))
    return false;
  static const std::regex integer(R"([-+]?[0-9]+)");
  static const std::regex real(R"([-+]?(\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(v, integer)) {
    std::int64_t i = 0;
    const char* first = v.data() + (v[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, v.data() + v.size(), i);
    if (ec == std::errc() && end == v.data() + v.size()) return i;
  }
  if (std::regex_match(v, real)) {
    double d = 0;
    const char* first = v.data() + (v[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, v.data() + v.size(), d);
    if (ec == std::errc() && end == v.data() + v.size()) return d;
  }
  return v;
}

class Converter {
 public:
  explicit Converter(const std::string& file) : file_(file) {}

  json convert(const YAML::Node& n, const std::string& path, int depth) {
    if (depth > kMaxYamlDepth)
      throw InputError(file_, path, fmt::format("nested deeper than {} levels", kMaxYamlDepth));
    if (++nodes_ > kMaxYamlNodes)
      throw InputError(file_, path,
                       fmt::format("the document expands to more than {} values (through "
                                   "aliases)",
                                   kMaxYamlNodes));
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        return scalar_value(n);
      case YAML::NodeType::Sequence: {
        json out = json::array();
        std::size_t i = 0;
        for (const auto& item : n)
          out.push_back(convert(item, fmt::format("{}/{}", path, i++), depth + 1));
        return out;
      }
      case YAML::NodeType::Map:
        return convert_map(n, path, depth);
    }
    return nullptr;
  }

 private:
  json convert_map(const YAML::Node& n, const std::string& path, int depth) {
    json out = json::object();
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        throw InputError(file_, path, "a key must be a scalar (a name), not a list or a mapping");
      const std::string key = kv.first.Scalar();
      if (out.contains(key))
        throw InputError(file_, path + "/" + printable(key), "key given twice");
      out[key] = convert(kv.second, path + "/" + printable(key), depth + 1);
    }
    return out;
  }

  const std::string& file_;
  long nodes_ = 0;
};

}  // namespace

json parse_yaml_text(std::string_view text, const std::string& file) {
  // YAML text is Unicode (UTF-8 here); a stray byte would reach messages and JSON output, which
  // cannot carry it.
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
    throw InputError(file, "",
                     fmt::format("not UTF-8 text: byte {} (0x{:02X}) starts no UTF-8 character",
                                 bad, static_cast<unsigned char>(text[bad])));
  try {
    return Converter(file).convert(YAML::Load(std::string(text)), "", 0);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) throw InputError(file, "", "malformed YAML: " + printable(e.msg, 512));
    throw InputError(file, "",
                     fmt::format("malformed YAML at line {}, column {}: {}", e.mark.line + 1,
                                 e.mark.column + 1, printable(e.msg, 512)));
  }
}

json load_yaml_file(const std::string& path) {
  return parse_yaml_text(read_input_file(path), path);
}

}  // namespace zerosim
