// YAML read as JSON: PyYAML's implicit scalar types, quoted scalars as strings, nesting, and the
// refusals (syntax errors with their line, duplicate keys, non-scalar keys, alias expansion and
// depth past the bounds) naming the file.
#include <doctest/doctest.h>

#include <string>

#include "sim/core/yaml_io.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

TEST_CASE("YAML scalars are typed as PyYAML types them; quoted ones stay strings") {
  const json j = parse_yaml_text(
      "a: true\nb: False\nc: yes\nd: off\ne: 12\nf: -3\ng: 2.5\nh: 1e3\ni: ~\nj:\nk: 'true'\n"
      "l: \"12\"\nm: FULL_SHARD\nn: [1, x]\no: {p: null}\n",
      "f.yaml");
  CHECK(j.at("a") == true);
  CHECK(j.at("b") == false);
  CHECK(j.at("c") == true);
  CHECK(j.at("d") == false);
  CHECK(j.at("e").is_number_integer());
  CHECK(j.at("e") == 12);
  CHECK(j.at("f") == -3);
  CHECK(j.at("g").is_number_float());
  CHECK(j.at("g").get<double>() == 2.5);
  CHECK(j.at("h").get<double>() == 1000.0);
  CHECK(j.at("i").is_null());
  CHECK(j.at("j").is_null());
  CHECK(j.at("k") == "true");
  CHECK(j.at("l") == "12");
  CHECK(j.at("m") == "FULL_SHARD");
  CHECK(j.at("n") == json::array({1, "x"}));
  CHECK(j.at("o").at("p").is_null());
}

TEST_CASE("bad YAML is refused naming the file, the line or the key") {
  expect_input_error([] { parse_yaml_text("a: [1, 2\nb: 3\n", "f.yaml"); }, "f.yaml", "",
                     "malformed YAML at line");
  expect_input_error([] { parse_yaml_text("a:\n  b: 1\n  b: 2\n", "f.yaml"); }, "f.yaml", "/a/b",
                     "key given twice");
  expect_input_error([] { parse_yaml_text("? [1, 2]\n: 3\n", "f.yaml"); }, "f.yaml", "",
                     "must be a scalar");
  // A stray byte (here 0xEC, a truncated 3-byte sequence) is refused at its offset, before any
  // value carries it into a message or JSON output.
  expect_input_error([] { parse_yaml_text("a: 1\nb: \xEC\n", "f.yaml"); }, "f.yaml", "",
                     "byte 8 (0xEC)");
  std::string deep;
  // The outermost value is at depth 0: kMaxYamlDepth + 2 brackets nest one level too deep.
  for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "[";
  for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "]";
  CHECK(caught_input_error([&] { parse_yaml_text(deep, "f.yaml"); }).file() == "f.yaml");
  // Nine levels of ten aliases each expand to 10^9 values: refused, not built.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const std::string prev(1, static_cast<char>(c - 1));
    laughs += std::string(1, c) + ": &" + std::string(1, c) + " [*" + prev;
    for (int k = 1; k < 10; ++k) laughs += ", *" + prev;
    laughs += "]\n";
  }
  CHECK(caught_input_error([&] { parse_yaml_text(laughs, "f.yaml"); }).rule().find("expands") !=
        std::string::npos);
}
