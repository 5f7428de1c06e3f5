// Closest match: the known word nearest to a misspelt one, for the "did you mean" of messages
// about unknown keys, flags, subcommands and choices. Distance is the optimal-string-alignment
// edit distance (insertions, deletions, substitutions and swaps of adjacent characters), ASCII
// case ignored; a known word is suggested only when it is within a third of the word's length
// (at least 1, at most 3 edits), so unrelated words get no suggestion.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace zerosim {

// Edits between a and b (optimal string alignment, ASCII case ignored).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `known` to `word` within the bound above, the first of equals in `known`'s
// order; empty when none is close enough.
std::string closest_match(std::string_view word, const std::vector<std::string_view>& known);
std::string closest_match(std::string_view word, std::initializer_list<std::string_view> known);
std::string closest_match(std::string_view word, const std::vector<std::string>& known);

// " (did you mean 'X'?)" with the closest match, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& known);

}  // namespace zerosim
