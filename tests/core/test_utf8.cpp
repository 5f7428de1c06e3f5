// UTF-8 validation: valid text of every sequence length passes; truncated, overlong, surrogate and
// out-of-range sequences fail, and require_utf8 names the flag.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "sim/core/utf8.hpp"

using namespace zerosim;

TEST_CASE("valid UTF-8 of 1 to 4 byte sequences is accepted") {
  CHECK(is_valid_utf8(""));
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
  try {
    require_utf8("\xFF", "--model");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "--model");
    CHECK(std::string(e.what()).find("not valid UTF-8") != std::string::npos);
  }
}
