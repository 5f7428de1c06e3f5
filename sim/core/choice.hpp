// A closed choice and its spellings: an enum whose values a flag, a file or a result names. Each
// such enum declares its table once, beside it (`choice_table(E)`, found by argument-dependent
// lookup), and parsing, printing and the lists of choices in help and errors all read that table.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zerosim {

template <class E>
struct ChoiceName {
  E value;
  std::string_view name;
};

// An enum with a table of names.
template <class E>
concept Choice = requires(E e) {
  { choice_table(e) } -> std::convertible_to<std::span<const ChoiceName<E>>>;
};

// The name of `value` in E's table ("" for a value the table lacks, which no parse produces).
template <Choice E>
std::string_view choice_name(E value) {
  for (const ChoiceName<E>& c : choice_table(E{}))
    if (c.value == value) return c.name;
  return {};
}

// The value named `text`, or nullopt.
template <Choice E>
std::optional<E> parse_choice(std::string_view text) {
  for (const ChoiceName<E>& c : choice_table(E{}))
    if (c.name == text) return c.value;
  return std::nullopt;
}

// Every name of E, in table order.
template <Choice E>
std::vector<std::string> choice_names() {
  std::vector<std::string> out;
  for (const ChoiceName<E>& c : choice_table(E{})) out.emplace_back(c.name);
  return out;
}

}  // namespace zerosim
