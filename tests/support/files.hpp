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

// A scratch folder for one test case: temp_dir(tag), emptied first, removed afterwards.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const char* tag) : path(temp_dir(tag)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};
