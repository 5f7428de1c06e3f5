// UTF-8 validation for user-supplied text that ends up in JSON output: nlohmann::json refuses to
// dump invalid UTF-8, so such text is rejected where it enters, with the flag or path that carried
// it.
#pragma once
#include <string>
#include <string_view>

namespace zerosim {

bool is_valid_utf8(std::string_view text);
// Throws InputError(<command line>, what, rule) unless text is valid UTF-8.
void require_utf8(std::string_view text, const std::string& what);

}  // namespace zerosim
