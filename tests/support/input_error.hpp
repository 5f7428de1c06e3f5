// expect_input_error: runs f and requires it to throw zerosim::InputError naming this file and JSON
// path (or flag), with a rule containing rule_part — the bad-input contract every parser keeps.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "sim/core/error.hpp"

template <class F>
void expect_input_error(F&& f, const std::string& file, const std::string& path,
                        const std::string& rule_part) {
  try {
    f();
    FAIL("expected InputError");
  } catch (const zerosim::InputError& e) {
    CHECK(e.file() == file);
    CHECK(e.path() == path);
    CHECK_MESSAGE(e.rule().find(rule_part) != std::string::npos, e.what());
  }
}
