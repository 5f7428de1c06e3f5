// Two helpers for the bad-input contract every parser keeps (throw zerosim::InputError naming the
// file, the JSON path or flag, and the rule that was broken):
// - expect_input_error(f, file, path, rule_part): runs f and requires an InputError naming this
//   file and path, with a rule containing rule_part.
// - caught_input_error(f): runs f, requires it to throw an InputError (FAIL otherwise) and returns
//   it, for tests that check something else (only the path, words of what(), an exact rule).
#pragma once
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"

template <class F>
zerosim::InputError caught_input_error(F&& f) {
  try {
    f();
  } catch (const zerosim::InputError& e) {
    return e;
  }
  FAIL("expected InputError");
  throw std::logic_error("caught_input_error: FAIL returned");  // unreachable: FAIL throws
}

template <class F>
void expect_input_error(F&& f, const std::string& file, const std::string& path,
                        const std::string& rule_part) {
  const zerosim::InputError e = caught_input_error(f);
  CHECK(e.file() == file);
  CHECK(e.path() == path);
  CHECK_MESSAGE(e.rule().find(rule_part) != std::string::npos, e.what());
}
