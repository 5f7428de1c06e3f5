// Shared harness for the libFuzzer targets: each target feeds the input to one library parser. A
// zerosim::InputError is the parser doing its job (bad input, clear message); any other exception,
// a crash, a sanitizer report, a hang or an out-of-memory is a bug and stops the fuzzer.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/utf8.hpp"

namespace zerosim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs fn; InputError is expected and swallowed, everything else propagates to libFuzzer (which
// reports an uncaught exception as a crash with the input saved).
template <class Fn>
void expect_input_error_only(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    // The message quotes at most a few hundred bytes of the input, as valid UTF-8 without terminal
    // escapes (issue 22): a 100 MB string or raw bytes in the input must not reach stderr.
    const std::string_view m = e.what();
    if (m.size() > 2048 || !is_valid_utf8(m) || m.find('\x1B') != std::string_view::npos) {
      std::fprintf(stderr, "InputError message not capped or not escaped (%zu bytes)\n", m.size());
      std::abort();
    }
  }
}

// Parsers that only take a path get the input through a per-process temporary file. The name ends
// in
// ".json" and contains '/', so resolve_data_file treats it as a path, never as a preset name.
inline std::string write_temp(std::string_view text, const char* stem) {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    return std::string(t && *t ? t : "/tmp");
  }();
  std::string path = dir + "/zerosim-fuzz-" + stem + "-" + std::to_string(::getpid()) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();  // the harness itself is broken; not a parser bug
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

}  // namespace zerosim::fuzz
