// Did-you-mean: the known name closest to a misspelled one, for messages that refuse a name
// (a subcommand, a flag, a choice value, a collective). Closeness is the optimal string alignment
// distance (Levenshtein with adjacent transpositions, each edit 1); a name is suggested only when
// it is at most max(1, length / 3) edits from the given one (1 up to 5 characters, 2 for 6 to 8,
// 3 for 9 to 11...), so a guess that shares little with every name suggests nothing.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace zerosim {

// The optimal string alignment distance between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name of `names` closest to `given` within the limit above (the first of equally close
// ones), or "" when none is.
std::string closest_name(std::string_view given, const std::vector<std::string>& names);

// "; did you mean 'NAME'?" for closest_name(given, names), or "" when it is "".
std::string did_you_mean(std::string_view given, const std::vector<std::string>& names);

}  // namespace zerosim
