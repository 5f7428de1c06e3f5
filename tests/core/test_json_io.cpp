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
