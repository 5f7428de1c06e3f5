// file_bytes and json_files_in (sim/core/memo.hpp) serve cached bytes and listings while stat()
// shows the file unchanged and settled; every change must be seen, whether the file changed within
// the last two seconds (bytes compared on each call) or long ago (stamp compared at most 20 ms
// after the last comparison).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/memo.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

// Lets the files written so far settle (their last change more than two seconds old).
void let_settle() { ::usleep(2'200'000); }
// Outlasts the re-check interval of settled files (20 ms, on a clock of a few ms resolution).
void let_recheck() { ::usleep(60'000); }

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

TEST_CASE("file_bytes sees every rewrite, fresh or settled, and shares unchanged bytes") {
  const fs::path dir = temp_dir("memo_bytes");
  const fs::path f = dir / "a.json", g = dir / "c.json";
  spit(f, "{\"x\": 1}");
  spit(g, "{\"y\": 1}");
  CHECK(*file_bytes(f.string()) == "{\"x\": 1}");
  // Rewritten at once with as many bytes: a fresh file is compared by its bytes.
  spit(f, "{\"x\": 2}");
  CHECK(*file_bytes(f.string()) == "{\"x\": 2}");
  let_settle();
  const auto first = file_bytes(f.string());
  const auto second = file_bytes(f.string());
  CHECK(*first == "{\"x\": 2}");
  CHECK(first.get() == second.get());  // settled and unchanged: served from the cache
  // Rewritten in place, same size: the new ctime is not the cached stamp's.
  spit(f, "{\"x\": 3}");
  let_recheck();
  CHECK(*file_bytes(f.string()) == "{\"x\": 3}");
  // A settled, cached file replaced by a rename (another inode).
  CHECK(*file_bytes(g.string()) == "{\"y\": 1}");
  CHECK(file_bytes(g.string()).get() == file_bytes(g.string()).get());
  spit(dir / "b.tmp", "{\"y\": 4}");
  fs::rename(dir / "b.tmp", g);
  let_recheck();
  CHECK(*file_bytes(g.string()) == "{\"y\": 4}");
  fs::remove(f);
  CHECK(file_bytes(f.string()) == nullptr);
  CHECK(file_bytes(dir.string()) == nullptr);  // not a regular file
  fs::remove_all(dir);
}

TEST_CASE("json_files_in lists as std::filesystem does and sees added and removed files") {
  const fs::path dir = temp_dir("memo_list");
  for (const char* name : {"b.json", "a.json", "c.txt", "d.json.bak", ".json", "e.x.json"})
    spit(dir / name, "{}");
  CHECK(json_files_in(dir.string()) == listed_by_filesystem(dir));
  let_settle();
  CHECK(json_files_in(dir.string()) == listed_by_filesystem(dir));  // now from the cache
  CHECK(json_files_in(dir.string()).size() == 3);
  fs::remove(dir / "a.json");  // the settled directory changes
  let_recheck();
  CHECK(json_files_in(dir.string()) == listed_by_filesystem(dir));
  CHECK(json_files_in(dir.string()).size() == 2);
  spit(dir / "f.json", "{}");
  let_recheck();
  CHECK(json_files_in(dir.string()) == listed_by_filesystem(dir));
  CHECK(json_files_in(dir.string()).size() == 3);
  fs::remove_all(dir);
  let_recheck();
  CHECK(json_files_in(dir.string()).empty());
}
