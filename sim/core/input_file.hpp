// Input files are opened safely: regular files only, read without ever blocking on a FIFO or a
// device (opened O_NONBLOCK, checked with fstat before the first read), and at most
// kMaxInputFileBytes long. Every file zerosim reads (JSON inputs, nccl-tests logs, measurements,
// sweep partial files) goes through here.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace zerosim {

// The largest input file read: 1 GiB (a 40-scenario sweep result is 150 KB).
inline constexpr std::int64_t kMaxInputFileBytes = std::int64_t{1} << 30;

// The bytes of `path` if it is a readable regular file of at most kMaxInputFileBytes; otherwise
// nullopt and the rule it broke in `why` ("not a regular file (a FIFO)", "file does not exist",
// ...). `st`, when given, receives fstat's view of the file taken before the read.
std::optional<std::string> read_regular_file(const std::string& path, std::string& why,
                                             struct stat* st = nullptr);

// read_regular_file, throwing InputError(path, "", rule) on failure.
std::string read_input_file(const std::string& path);

// Calls fn(line, unterminated) for each line of the file (without its newline), holding one line
// in memory: the same checks as read_input_file, and `unterminated` true only for a last line the
// file ends in without a newline (a writer interrupted mid-line leaves one).
void for_each_input_line(const std::string& path,
                         const std::function<void(std::string_view line, bool unterminated)>& fn);

}  // namespace zerosim
