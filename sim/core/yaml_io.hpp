// YAML input: a YAML document read into the JSON value the strict readers take (JsonReader), so a
// YAML config (an LLM Foundry or Hugging Face Accelerate FSDP config) is checked with the same
// rules and messages as a JSON one. Scalars are typed as PyYAML (the YAML 1.1 resolver Composer
// and Accelerate load their configs with) types them: null (~, null, empty), booleans (true,
// false, yes, no, on, off, in lower, Title or UPPER case), integers, floats; a quoted scalar is a
// string. A key given twice, a key that is not a scalar, nesting deeper than kMaxYamlDepth and
// documents that expand (through aliases) past kMaxYamlNodes values are refused naming the file.
#pragma once
#include <string>
#include <string_view>

#include "sim/core/json_io.hpp"

namespace zerosim {

inline constexpr int kMaxYamlDepth = 64;
inline constexpr long kMaxYamlNodes = 1'000'000;

// The first YAML document of `text`; InputError(file, ...) naming the line and column of a
// syntax error, or the key path of a duplicate key.
json parse_yaml_text(std::string_view text, const std::string& file);
// parse_yaml_text of a file read as every input file is (input_file.hpp).
json load_yaml_file(const std::string& path);

}  // namespace zerosim
