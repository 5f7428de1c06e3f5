// Did-you-mean: the optimal string alignment distance against hand-counted edits, and the
// suggestion limit max(1, length / 3) on both sides of it.
#include <doctest/doctest.h>

#include "sim/core/suggest.hpp"

using namespace zerosim;

TEST_CASE("edit distance counts insertions, deletions, substitutions and transpositions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("simulat", "simulate") == 1);      // an insertion
  CHECK(edit_distance("--stratgy", "--strategy") == 1);  // an insertion
  CHECK(edit_distance("zerp3", "zero3") == 1);           // a substitution
  CHECK(edit_distance("fat-tere", "fat-tree") == 1);     // a transposition
  CHECK(edit_distance("kitten", "sitting") == 3);        // the textbook pair
  CHECK(edit_distance("ca", "abc") == 3);                // OSA: no edit of a transposed pair
  CHECK(edit_distance("abc", "ca") == edit_distance("ca", "abc"));
}

TEST_CASE("the closest name within max(1, length / 3) edits is suggested") {
  const std::vector<std::string> commands = {"simulate", "sweep", "plan", "report", "compare"};
  CHECK(closest_name("simulat", commands) == "simulate");
  CHECK(closest_name("swep", commands) == "sweep");  // 4 characters: 1 edit allowed
  CHECK(closest_name("sewp", commands).empty());     // a transposition and an insertion: 2 > 1
  CHECK(closest_name("xyz", commands).empty());      // nothing close
  CHECK(closest_name("pln", commands) == "plan");
  CHECK(closest_name("pn", commands).empty());  // 2 edits from plan, 1 allowed
  CHECK(did_you_mean("reprot", commands) == "; did you mean 'report'?");
  CHECK(did_you_mean("histogram", commands).empty());
  // Equally close: the first listed.
  CHECK(closest_name("ab", {"ac", "ad"}) == "ac");
}
