// UTF-8 validation: valid text of every sequence length passes; truncated, overlong, surrogate and
// out-of-range sequences fail, and require_utf8 names the flag.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "sim/core/utf8.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

TEST_CASE("valid UTF-8 of 1 to 4 byte sequences is accepted") {
  CHECK(is_valid_utf8(""));
  CHECK(first_invalid_utf8("ab\xC3\xA9"
                           "c") == std::string_view::npos);
  CHECK(first_invalid_utf8("ab\xC3\xA9\xEC"
                           "x") == 4);
  CHECK(is_valid_utf8("gpt-18b"));
  CHECK(is_valid_utf8("\xC3\xA9"));          // U+00E9
  CHECK(is_valid_utf8("\xE2\x82\xAC"));      // U+20AC
  CHECK(is_valid_utf8("\xF0\x9F\x98\x80"));  // U+1F600
}

TEST_CASE("invalid sequences are rejected") {
  CHECK_FALSE(is_valid_utf8("\xFF"));              // never valid
  CHECK_FALSE(is_valid_utf8("a\xC3"));             // truncated
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // beyond U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xC3("));             // bad continuation byte
  const auto e = caught_input_error([] { require_utf8("\xFF", "--model"); });
  CHECK(e.path() == "--model");
  CHECK(std::string(e.what()).find("not valid UTF-8") != std::string::npos);
}

TEST_CASE("printable escapes invalid UTF-8 and control characters and caps the length") {
  CHECK(printable("gpt-18b \xC3\xA9") == "gpt-18b \xC3\xA9");  // valid text is kept
  CHECK(printable("a\xFF"
                  "b") == "a\\xFFb");                 // an invalid byte
  CHECK(printable("\x1B[31mred") == "\\x1B[31mred");  // a terminal escape
  CHECK(printable("\xC2\x9B"
                  "2J") == "\\xC2\\x9B2J");  // C1 control (CSI), two bytes
  CHECK(printable("a\x7F") == "a\\x7F");
  CHECK(printable("l1\nl2") == "l1\\x0Al2");
  CHECK(printable("l1\nl2", 100, true) == "l1\nl2");
  const std::string big(1'000'000, 'x');
  const std::string p = printable(big);
  CHECK(p.size() < 300);
  CHECK(p.find("... (999744 more bytes)") != std::string::npos);
  // The cut never splits a character.
  std::string euros;
  for (int i = 0; i < 200; ++i) euros += "\xE2\x82\xAC";
  CHECK(is_valid_utf8(printable(euros)));
}

TEST_CASE("an InputError quoting huge or hostile input stays short, valid UTF-8, escape-free") {
  const InputError e("cfg\x1B[2J.json", "/key\xFF",
                     "unknown key '" + std::string(100'000, 'k') + "'");
  const std::string what = e.what();
  CHECK(what.size() < 1500);
  CHECK(is_valid_utf8(what));
  CHECK(what.find('\x1B') == std::string::npos);
  CHECK(what.find("cfg\\x1B[2J.json") != std::string::npos);
  CHECK(what.find("/key\\xFF") != std::string::npos);
  CHECK(what.find("more bytes") != std::string::npos);
}
