// Whole-file read and write, and per-process scratch folders, for tests that compare or rewrite
// output and input files.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

// The file's bytes; fails the test if it cannot be opened.
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "missing file " << path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the file's content with text.
inline void spit(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE_MESSAGE(out, "cannot write " << path.string());
  out << text;
}

// A fresh-enough scratch folder for this process: <tmp>/zerosim_<tag>_<pid>, created.
inline std::filesystem::path temp_dir(const char* tag) {
  std::filesystem::path d = std::filesystem::temp_directory_path() /
                            (std::string("zerosim_") + tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}
