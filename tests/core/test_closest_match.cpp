// Closest match: edit distances against hand-counted values, the suggestion bound, and every
// unknown key of an object reported at once with its closest allowed key.
#include <doctest/doctest.h>

#include <string>

#include "sim/core/closest_match.hpp"
#include "sim/core/json_io.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

TEST_CASE("edit distance counts insertions, deletions, substitutions and adjacent swaps") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("stage", "") == 5);
  CHECK(edit_distance("", "stage") == 5);
  CHECK(edit_distance("stage", "stage") == 0);
  CHECK(edit_distance("Stage", "stage") == 0);       // ASCII case ignored
  CHECK(edit_distance("stgae", "stage") == 1);       // one adjacent swap
  CHECK(edit_distance("stratgy", "strategy") == 1);  // one insertion
  CHECK(edit_distance("kitten", "sitting") == 3);    // 2 substitutions + 1 insertion
  CHECK(edit_distance("zero_optimisation", "zero_optimization") == 1);
  CHECK(edit_distance("ca", "abc") == 3);  // OSA: no edit of a swapped pair
}

TEST_CASE("a suggestion comes only within a third of the word's length") {
  const std::vector<std::string_view> flags = {"--strategy", "--stages", "--nodes"};
  CHECK(closest_match("--stratgy", flags) == "--strategy");
  CHECK(closest_match("--nodse", flags) == "--nodes");
  CHECK(closest_match("--bytes", flags).empty());  // 3 edits from --nodes: unrelated
  CHECK(closest_match("ab", {"abc"}).empty());     // too short to guess
  CHECK(closest_match("Stage", {"stage"}) == "stage");
  const std::vector<std::string> commands = {"simulate", "sweep", "plan", "report", "compare"};
  CHECK(closest_match("simulat", commands) == "simulate");
  CHECK(closest_match("swep", commands) == "sweep");  // 4 characters: 1 edit allowed
  CHECK(closest_match("sewp", commands).empty());     // a transposition and an insertion: 2 > 1
  CHECK(closest_match("xyz", commands).empty());      // nothing close
  CHECK(closest_match("pln", commands) == "plan");
  CHECK(closest_match("pn", commands).empty());  // too short to guess
  CHECK(did_you_mean("reprot", commands) == " (did you mean 'report'?)");
  // Equals: the first in the list's order (deterministic).
  CHECK(closest_match("abcd", {"abce", "abcf"}) == "abce");
  CHECK(did_you_mean("bfloat17", std::vector<std::string_view>{"bfloat16", "fp16"}) ==
        " (did you mean 'bfloat16'?)");
  CHECK(did_you_mean("xyzzy", std::vector<std::string_view>{"bfloat16", "fp16"}).empty());
}

TEST_CASE("require_object names every unknown key at once, each with its closest allowed key") {
  const json j = json::parse(R"({"stage": 3, "overlap_com": true, "sub_group_sise": 1, "qqq": 2})");
  const auto e = caught_input_error([&] {
    JsonReader(j, "ds.json", "/zero_optimization")
        .require_object({"stage", "overlap_comm", "sub_group_size"});
  });
  CHECK(e.file() == "ds.json");
  CHECK(e.path() == "/zero_optimization/overlap_com");
  const std::string m = e.rule();
  CHECK(m.find("unknown key 'overlap_com' (did you mean 'overlap_comm'?)") == 0);
  CHECK(m.find("also unknown here: 'qqq', 'sub_group_sise' (did you mean 'sub_group_size'?)") !=
        std::string::npos);
  CHECK(m.find("(allowed: stage, overlap_comm, sub_group_size)") != std::string::npos);
}
