// Importer for nccl-tests output (all_gather_perf, reduce_scatter_perf, all_reduce_perf, alltoall_perf,
// sendrecv_perf), so users can calibrate from logs of their own cluster.
// Text logs: comment lines start with '#'; "#  Rank  r Group g Pid p on HOST device d [..] NAME" lines
// give the rank count and hosts; a result row is a line whose first token is an integer:
//   size count type [redop] [root]  time algbw busbw #wrong  time algbw busbw #wrong
// (out-of-place, then in-place; time in us, bandwidths in GB/s; #wrong is an integer, "N/A" without
// validation, or an error float in old versions). Other lines (NCCL INFO/WARN output) are ignored.
// JSON (-J): an object with a "results" array of {"size": B, ..., "out_of_place": {"time": us, "algbw",
// "busbw", "nwrong"|"wrong"}, "in_place": {...}} (unknown keys are ignored: this is a third party's format).
#pragma once
#include <string>
#include <vector>

#include "calibrate/fit/measurements.hpp"

namespace zerosim::calib {

struct NcclTestsOptions {
  std::string op;     // all_gather | reduce_scatter | all_reduce | all_to_all | send_recv
  int ranks = 0;      // 0: from the log's "Rank" lines
  int nodes = 0;      // 0: distinct hosts in the log's "Rank" lines, else 1
  bool in_place = false;
};

struct NcclTestsLog {
  std::vector<CollectiveRecord> records;
  int ranks_in_log = 0;          // "Rank" lines seen
  std::vector<std::string> hosts;  // distinct, in order of appearance
  std::string header;            // the "# nThread ..." line, if any
};

// Parses one log's text (text or JSON, detected by the first non-blank character). Errors are
// InputError("file:line", column name, rule): malformed rows, non-positive sizes/times, #wrong > 0,
// a log with no result rows, ranks unknown.
NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file, const NcclTestsOptions& opt);
NcclTestsLog load_nccl_tests(const std::string& path, const NcclTestsOptions& opt);

}  // namespace zerosim::calib
