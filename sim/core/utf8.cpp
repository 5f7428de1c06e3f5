#include "sim/core/utf8.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace zerosim {

namespace {

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0 when none starts
// there.
std::size_t sequence_at(std::string_view text, std::size_t i, unsigned& cp) {
  const auto c = static_cast<unsigned char>(text[i]);
  int extra = 0;
  unsigned min = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    extra = 1, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i <= static_cast<std::size_t>(extra)) return 0;  // truncated sequence
  cp = c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const auto d = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and code points beyond U+10FFFF are not valid UTF-8.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return static_cast<std::size_t>(extra) + 1;
}

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  unsigned cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_at(text, i, cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

bool is_valid_utf8(std::string_view text) {
  return first_invalid_utf8(text) == std::string_view::npos;
}

std::string printable(std::string_view text, std::size_t max_bytes, bool keep_newlines) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 16);
  std::size_t i = 0;
  unsigned cp = 0;
  while (i < text.size() && out.size() < max_bytes) {
    const std::size_t n = sequence_at(text, i, cp);
    const bool control = n != 0 && (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F));
    if (n != 0 && (!control || (keep_newlines && (cp == '\n' || cp == '\t')))) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) {  // each byte as \xNN
      const auto b = static_cast<unsigned char>(text[i + k]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
    i += std::max<std::size_t>(n, 1);
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
  return out;
}

void require_utf8(std::string_view text, const std::string& what) {
  if (!is_valid_utf8(text)) throw flag_error(what, "value is not valid UTF-8 text");
}

}  // namespace zerosim
