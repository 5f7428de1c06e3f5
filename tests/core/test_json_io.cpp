// Strict JSON: a key given twice in one object is an InputError naming the key's JSON path and
// both occurrences by byte offset, at any depth; the same key in different objects is fine.
#include <doctest/doctest.h>

#include <string>

#include "sim/core/json_io.hpp"
#include "tests/support/input_error.hpp"

using zerosim::parse_json_text;

TEST_CASE("a duplicate key names its path and the byte offsets of both occurrences") {
  // Offsets are 1-based, of each key's closing quote: "a" at bytes 2..4, the second at 18..20.
  const std::string text = R"({"a": 1, "b": 2, "a": 3})";
  const zerosim::InputError e = caught_input_error([&] { parse_json_text(text, "f.json"); });
  CHECK(e.file() == "f.json");
  CHECK(e.path() == "/a");
  CHECK(e.rule().find("duplicate key 'a'") != std::string::npos);
  CHECK(e.rule().find("ends at byte 20") != std::string::npos);
  CHECK(e.rule().find("first one at byte 4") != std::string::npos);
}

TEST_CASE("a duplicate key deep in arrays and objects is found with its full path") {
  const std::string text = R"({"x": [0, {"y": {}}, {"z": {"k": 1, "k": 2}}]})";
  const zerosim::InputError e = caught_input_error([&] { parse_json_text(text, "f.json"); });
  CHECK(e.path() == "/x/2/z/k");
  // The same key in sibling objects and in nested ones is not a duplicate.
  const auto ok = parse_json_text(R"([{"k": 1}, {"k": 2, "o": {"k": 3}}, {"k": [{"k": 4}]}])", "f");
  CHECK(ok[1]["o"]["k"] == 3);
  CHECK(ok[2]["k"][0]["k"] == 4);
}

TEST_CASE("keys that differ only by escapes are decoded before comparing") {
  // "\u0061" is "a": the parser decodes both to the same key.
  const zerosim::InputError e =
      caught_input_error([] { parse_json_text(R"({"a": 1, "\u0061": 2})", "f.json"); });
  CHECK(e.path() == "/a");
}

TEST_CASE("a syntax error still names its byte, after the duplicate check's iterator") {
  const zerosim::InputError e =
      caught_input_error([] { parse_json_text(R"({"a": 1,, "b": 2})", "f.json"); });
  CHECK(e.rule().find("malformed JSON at byte 9") != std::string::npos);
}

namespace {

// dump(1) with every line indented by `depth` spaces: what append_indented_json must equal.
std::string indented_dump(const nlohmann::json& j, std::size_t depth) {
  std::string text = j.dump(1), out(depth, ' ');
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(depth, ' ');
  }
  return out;
}

}  // namespace

TEST_CASE("compact JSON re-indented equals dump(1) byte for byte, strings untouched") {
  // Nested deeper than the indents the re-indenter keeps at first.
  nlohmann::json deep = {{"leaf", 1}, {"list", {1, 2}}};
  for (int level = 0; level < 30; ++level) deep = {{"a", deep}, {"b", level}};
  const nlohmann::json values[] = {
      nlohmann::json::parse(R"({"a": {}, "b": [], "c": [1, 2.5, -3e-7, true, false, null],
        "d": {"e": [{"f": "x"}, []], "g": {"h": {}}}, "s": "{[,:]} \"quoted\" \\ back\\slash",
        "u": "\u00e9\u4e2d \n\t", "": 0, "k:": "v,"})"),
      nlohmann::json::array(),
      nlohmann::json::object(),
      nlohmann::json(1.0 / 3),
      nlohmann::json("a string"),
      nlohmann::json::parse(R"([[[]], [{}], {"x": [1]}])"),
      deep};
  for (const auto& j : values)
    for (std::size_t depth : {0, 2, 5, 40}) {
      std::string out = "prefix";
      zerosim::append_indented_json(j.dump(), depth, out);
      CHECK(out == "prefix" + indented_dump(j, depth));
    }
}
