// JsonTextWriter against nlohmann's dump() of the same value, and JsonTreeObject against the tree.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/json_text.hpp"

using namespace zerosim;

namespace {

// One object's members, described once to either side.
template <class Object>
void members(Object& o) {
  o.put("a", 1.0);
  o.put("b", -0.0);
  o.put("big", std::numeric_limits<std::uint64_t>::max());
  o.put("denormal", 5e-324);
  o.put("escapes", std::string("quote \" backslash \\ tab \t bell \x07 del \x7f"));
  o.put("int", std::int64_t{-42});
  o.put_object("nested", [](auto& n) {
    n.put("empty", std::vector<std::string>{});
    n.put("list", std::vector<std::string>{"x", "y"});
    n.put("tree", json::parse(R"({"k": [1, 2.5, "s", null, {}], "e": {}})"));
  });
  o.put("small", 0.1);
  o.put("true", true);
  o.put("utf8", std::string("\xc3\xa9t\xc3\xa9 \xe2\x82\xac"));
}

}  // namespace

TEST_CASE("the text writer writes what nlohmann's dump writes for the same value") {
  json tree = json::object();
  JsonTreeObject t(tree);
  members(t);
  JsonTextWriter w;
  w.begin_object();
  members(w);
  w.end_object();
  CHECK(w.text() == tree.dump());
  CHECK(w.all_finite());
  // clear() starts again; a top-level array; a spliced text.
  w.clear();
  w.begin_array();
  w.value(1);
  w.value(JsonText{R"({"x":1})"});
  w.begin_object();
  w.end_object();
  w.value("s");
  w.end_array();
  CHECK(w.text() == R"([1,{"x":1},{},"s"])");
}

TEST_CASE("the indented form is append_indented_json of the compact text, written with it") {
  for (const std::size_t depth : {0, 2, 5}) {
    CAPTURE(depth);
    JsonTextWriter w;
    w.begin_object();
    w.put("before", 1);
    w.key("value");
    w.begin_indented(depth);
    w.begin_object();
    members(w);
    w.put("z_array", std::vector<std::string>{"a"});
    w.key("z_arrays");
    w.begin_array();
    w.begin_array();
    w.end_array();
    w.begin_object();
    w.put("k", JsonText{R"({"a":[1,{}],"b":{"c":[]}})"});
    w.end_object();
    w.value(2.5);
    w.end_array();
    w.put("z_empty", json::object());
    w.put("z_splice", JsonText{R"([{"x":1},[]])"});
    w.put("z_splice_again", JsonText{R"([{"x":1},[]])"});  // its kept indented form
    w.put_object("z_splice_deeper", [](auto& o) { o.put("s", JsonText{R"([{"x":1},[]])"}); });
    w.end_object();
    w.end_indented();
    w.put("z", 2);
    w.end_object();
    const json all = json::parse(w.text());
    std::string expected;
    append_indented_json(all.at("value").dump(), depth, expected);
    CHECK(w.indented() == expected);
    // A scalar alone.
    w.clear();
    w.begin_indented(depth);
    w.value(0.5);
    w.end_indented();
    CHECK(w.indented() == std::string(depth, ' ') + "0.5");
  }
}

TEST_CASE("a number that is not finite is written null and reported") {
  for (const double v :
       {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    JsonTextWriter w;
    w.begin_object();
    w.put("x", v);
    w.end_object();
    CHECK(w.text() == R"({"x":null})");
    CHECK_FALSE(w.all_finite());
    w.clear();
    CHECK(w.all_finite());
  }
}

TEST_CASE("keys out of the map's order, and misplaced calls, are refused") {
  JsonTextWriter w;
  w.begin_object();
  w.put("b", 1);
  CHECK_THROWS_AS(w.put("a", 2), std::logic_error);
  CHECK_THROWS_AS(w.put("b", 2), std::logic_error);  // a duplicate
  w.clear();
  w.begin_object();
  w.put("Z", 1);
  w.put("a", 1);  // byte order: upper case first, as std::map<std::string> sorts
  w.put("a_", 1);
  w.put("ab", 1);
  w.end_object();
  CHECK(w.text() == R"({"Z":1,"a":1,"a_":1,"ab":1})");
  w.clear();
  w.begin_object();
  CHECK_THROWS_AS(w.value(1), std::logic_error);  // a member without its key
  w.clear();
  CHECK_THROWS_AS(w.key("k"), std::logic_error);  // outside an object
  CHECK_THROWS_AS(w.end_object(), std::logic_error);
  CHECK_THROWS_AS(w.end_array(), std::logic_error);
  w.begin_indented(0);
  w.begin_object();
  CHECK_THROWS_AS(w.end_indented(), std::logic_error);  // before its value is whole
}

TEST_CASE("invalid UTF-8 is refused as nlohmann's dump refuses it") {
  JsonTextWriter w;
  CHECK_THROWS_AS(w.value(std::string("\xff")), json::type_error);
}
