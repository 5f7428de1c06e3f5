// UTF-8 validation for user-supplied text that ends up in JSON output: nlohmann::json refuses to
// dump invalid UTF-8, so such text is rejected where it enters, with the flag or path that carried
// it.
#pragma once
#include <string>
#include <string_view>

namespace zerosim {

bool is_valid_utf8(std::string_view text);
// The byte offset of the first byte that starts no valid UTF-8 sequence, or npos.
std::size_t first_invalid_utf8(std::string_view text);

// Input text made safe to quote in a message: invalid UTF-8 bytes and control characters (C0, DEL
// and C1, so no terminal escape sequence) written as \xNN, and at most `max_bytes` of the text kept
// (cut at a character boundary, then "... (N more bytes)"). With keep_newlines, '\n' and '\t'
// stay as they are (for messages that are laid out in lines).
inline constexpr std::size_t kMaxQuotedBytes = 256;
std::string printable(std::string_view text, std::size_t max_bytes = kMaxQuotedBytes,
                      bool keep_newlines = false);
// Throws InputError(<command line>, what, rule) unless text is valid UTF-8.
void require_utf8(std::string_view text, const std::string& what);

}  // namespace zerosim
