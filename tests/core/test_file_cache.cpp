// FileCache (sim/core/file_cache.hpp) serves cached bytes, listings and parsed values only while
// the file is known unchanged, checked on every access: every change must be seen by the next
// access, whether the file changed within the last two seconds (bytes compared) or long ago, in
// both ways of knowing (stat() stamps, and the kernel's change reports), with no waiting between.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/file_cache.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

// Lets the files written so far settle (their last change more than two seconds old).
void let_settle() { ::usleep(2'200'000); }

std::vector<std::string> listed_by_filesystem(const fs::path& dir) {
  std::vector<std::string> want;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") want.push_back(e.path().string());
  std::sort(want.begin(), want.end());
  return want;
}

}  // namespace

TEST_CASE("settled: the last change more than two seconds before the read") {
  FileStamp s;
  const std::int64_t now = 5'000'000'000;
  s.mtime_ns = s.ctime_ns = now - 2'000'000'001;
  CHECK(settled(s, now));
  s.ctime_ns = now - 2'000'000'000;  // exactly two seconds: not yet
  CHECK_FALSE(settled(s, now));
  s.ctime_ns = now - 3'000'000'000;
  s.mtime_ns = now - 1'999'999'999;  // a recent (or future-dated) mtime also counts
  CHECK_FALSE(settled(s, now));
}

TEST_CASE("bytes: every rewrite is seen by the next access, unchanged bytes are shared") {
  for (const bool watch : {true, false}) {
    CAPTURE(watch);
    FileCache files(watch);
    const fs::path dir = temp_dir(watch ? "file_cache_watch" : "file_cache_stat");
    const fs::path f = dir / "a.json", g = dir / "c.json";
    spit(f, "{\"x\": 1}");
    spit(g, "{\"y\": 1}");
    CHECK(*files.bytes(f.string()) == "{\"x\": 1}");
    // Rewritten at once with as many bytes: a fresh file is compared by its bytes.
    spit(f, "{\"x\": 2}");
    CHECK(*files.bytes(f.string()) == "{\"x\": 2}");
    let_settle();
    const auto first = files.bytes(f.string());
    const auto second = files.bytes(f.string());
    CHECK(*first == "{\"x\": 2}");
    CHECK(first.get() == second.get());  // settled and unchanged: served from the cache
    // Rewritten in place, same size, and read at once.
    spit(f, "{\"x\": 3}");
    CHECK(*files.bytes(f.string()) == "{\"x\": 3}");
    // Rewritten with the same bytes: the same pointer.
    const auto third = files.bytes(f.string());
    spit(f, "{\"x\": 3}");
    CHECK(files.bytes(f.string()).get() == third.get());
    // A settled, cached file replaced by a rename (another inode).
    CHECK(*files.bytes(g.string()) == "{\"y\": 1}");
    CHECK(files.bytes(g.string()).get() == files.bytes(g.string()).get());
    spit(dir / "b.tmp", "{\"y\": 4}");
    fs::rename(dir / "b.tmp", g);
    CHECK(*files.bytes(g.string()) == "{\"y\": 4}");
    fs::remove(f);
    CHECK(files.bytes(f.string()) == nullptr);
    CHECK(files.bytes(dir.string()) == nullptr);  // not a regular file
    fs::remove_all(dir);
  }
}

TEST_CASE("a Round sees the files as they were when it opened, or later; the next one sees all") {
  FileCache files;
  const fs::path dir = temp_dir("file_cache_round");
  const fs::path f = dir / "a.json";
  spit(f, "1");
  {
    const FileCache::Round round(files);
    CHECK(*files.bytes(f.string()) == "1");
    spit(f, "2");
    const std::string seen = *files.bytes(f.string());
    CHECK((seen == "1" || seen == "2"));
  }
  {
    const FileCache::Round round(files);
    CHECK(*files.bytes(f.string()) == "2");
  }
  CHECK(*files.bytes(f.string()) == "2");
  fs::remove_all(dir);
}

TEST_CASE("parsed: once per distinct content, again after every change") {
  for (const bool watch : {true, false}) {
    CAPTURE(watch);
    FileCache files(watch);
    const fs::path dir = temp_dir("file_cache_parsed");
    const std::string f = (dir / "n.json").string();
    int parses = 0;
    auto parse = [&](const std::string& text) {
      ++parses;
      return std::stoi(text);
    };
    spit(f, "7");
    CHECK(*files.parsed<int>(f, parse) == 7);
    CHECK(*files.parsed<int>(f, parse) == 7);
    CHECK(parses == 1);
    spit(f, "8");
    CHECK(*files.parsed<int>(f, parse) == 8);
    CHECK(parses == 2);
    // Another type from the same file is its own entry.
    CHECK(*files.parsed<long>(f, [](const std::string& t) { return std::stol(t) + 1; }) == 9);
    fs::remove(f);
    CHECK(files.parsed<int>(f, parse) == nullptr);
    fs::remove_all(dir);
  }
}

TEST_CASE("json_files_in lists as std::filesystem does and sees added and removed files") {
  for (const bool watch : {true, false}) {
    CAPTURE(watch);
    FileCache files(watch);
    const fs::path dir = temp_dir("file_cache_list");
    for (const char* name : {"b.json", "a.json", "c.txt", "d.json.bak", ".json", "e.x.json"})
      spit(dir / name, "{}");
    CHECK(*files.json_files_in(dir.string()) == listed_by_filesystem(dir));
    let_settle();
    CHECK(*files.json_files_in(dir.string()) == listed_by_filesystem(dir));  // from the cache
    CHECK(files.json_files_in(dir.string())->size() == 3);
    fs::remove(dir / "a.json");  // the settled directory changes
    CHECK(*files.json_files_in(dir.string()) == listed_by_filesystem(dir));
    CHECK(files.json_files_in(dir.string())->size() == 2);
    spit(dir / "f.json", "{}");
    CHECK(*files.json_files_in(dir.string()) == listed_by_filesystem(dir));
    CHECK(files.json_files_in(dir.string())->size() == 3);
    fs::remove_all(dir);
    CHECK(files.json_files_in(dir.string())->empty());
  }
}
