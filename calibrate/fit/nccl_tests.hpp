// Importer for nccl-tests output (all_gather_perf, reduce_scatter_perf, all_reduce_perf,
// alltoall_perf, sendrecv_perf) and for `zerosim collective --json`, so users can calibrate from
// logs of their own cluster and compare zerosim's predictions with them.
//
// Text logs: comment lines start with '#'.
//   "# Collective test starting: all_gather_perf" opens a section (nccl-tests >= 2.17 prints one
//   per test, several tests may share a log); the section's rows are recorded under that test's op.
//   broadcast/reduce/gather/scatter/hypercube (and unknown) tests have no zerosim op: their
//   sections are skipped with a note. Rows outside any section line take --op, else the op named in
//   the file name (nccl_tests_op_from_file_name), else the log is an error asking for --op.
//   "# nThread ..." is the run's header; a second one after rows or Rank lines starts a new section
//   with the same op (concatenated runs).
//   "#  Rank  r Group g Pid p on HOST device d [busid] NAME" lines give the section's ranks
//   (distinct r), nodes (distinct HOST), ranks per node and the GPU (nccl_tests_gpu_model maps
//   NAME). A result row is a line whose first token is an integer:
//     size count type [redop] [root]  time algbw busbw #wrong  time algbw busbw #wrong
//   (out-of-place, then in-place; time in us, bandwidths in GB/s; #wrong is an integer, "N/A"
//   without validation or for in-place alltoall/sendrecv, or an error float in old versions). type
//   is any nccl-tests type name; for the known ones count must match size the way nccl-tests prints
//   it (size = count x type size, x ranks for all_gather, reduce_scatter and alltoall). Rows of
//   size 0 are skipped and counted in the notes. Other lines (NCCL INFO/WARN output) are ignored.
// JSON (-J): an object with a "results" array of {"size": B, "count", "type", ..., "out_of_place":
//   {"time": us, "algbw", "busbw", "nwrong"|"wrong"}, "in_place": {...}}, an array of such objects,
//   or several such objects one after another (one per collective). The op comes from a string
//   value naming a test ("all_gather_perf", or an op name) under "collective", "test", "name", "op"
//   or "test_name" at the top level or in "config", else as for text logs. Ranks, hosts and the GPU
//   come from a "devices" (or "ranks") array of objects with "hostname"|"host" and
//   "name"|"device_name" keys, else from "nranks"|"nRanks"|"world_size". Unknown keys are ignored
//   (a third party's format); the values read are checked strictly.
// zerosim JSON (`zerosim collective --json`, detected by "command": "collective"): "op", "ranks",
//   "gpus_per_node", optional "rank_nodes" (else nodes = ceil(ranks / gpus_per_node)), optional
//   "gpu_model", "rows" of {"size_bytes", "time_us", ...} (unknown row keys are ignored).
#pragma once
#include <string>
#include <vector>

#include "calibrate/fit/measurements.hpp"

namespace zerosim::calib {

struct NcclTestsOptions {
  // "" = every op the log holds; else a filter: keep only that op's rows (all_gather |
  // reduce_scatter | all_reduce | all_to_all | send_recv). It also names the op of rows that no
  // section line or file name names.
  std::string op;
  int ranks = 0;  // 0: from the log's "Rank" lines
  int nodes = 0;  // 0: distinct hosts in the log's "Rank" lines, else 1
  bool in_place = false;
};

// One collective test of a log: a "# Collective test starting:" section, a JSON object, or the
// whole log when it has neither.
struct NcclTestsSection {
  std::string test;   // "all_gather_perf" as the log names it; "" when the log does not name it
  std::string op;     // zerosim op of its rows; "" when skipped (no zerosim op)
  std::string where;  // "file:line" of the section line (or of its first row)
  int rows = 0;       // records taken from it (after the --op filter)
  int ranks = 0, nodes = 0, gpus_per_node = 0;  // as recorded (0 when no row was recorded)
  std::vector<std::string> hosts;               // distinct, in order of appearance
  std::string device;  // the GPU name of its Rank lines ("" if none or mixed)
};

struct NcclTestsLog {
  std::vector<CollectiveRecord> records;
  std::vector<NcclTestsSection> sections;
  int ranks_in_log = 0;            // distinct ranks in the first section with Rank lines
  std::vector<std::string> hosts;  // distinct hosts over all sections, in order of appearance
  std::string header;              // the first "# nThread ..." line, if any
  std::string device;              // the GPU name every section agrees on ("" if none or mixed)
  std::string gpu_model;           // nccl_tests_gpu_model(device); "" when unknown
  std::vector<std::string> notes;  // skipped sections, filtered rows, size-0 rows
};

// Maps a GPU name as nccl-tests prints it ("NVIDIA H100 80GB HBM3") to zerosim's gpu_model string
// ("H100-SXM5-80GB"); a name that already is a zerosim gpu_model maps to itself; "" when unknown.
std::string nccl_tests_gpu_model(const std::string& device_name);

// The zerosim op named by an nccl-tests test ("all_gather_perf") or op name ("all_gather",
// "alltoall", "sendrecv", ...); "" when zerosim has no such op (broadcast, reduce, ...).
std::string nccl_tests_op_from_test(const std::string& test);

// The zerosim op named in a file name (its last path component, case-insensitive substrings
// all_reduce|allreduce, all_gather|allgather, reduce_scatter|reducescatter, alltoall|all_to_all,
// sendrecv|send_recv); "" when it names none or several.
std::string nccl_tests_op_from_file_name(const std::string& path);

// Parses one log's text (text, -J JSON or zerosim JSON, detected by the first non-blank character
// and the "command" key). Errors are InputError("file:line" or file, column name / JSON path /
// flag, rule): malformed rows, non-positive sizes/times, #wrong > 0, count not matching size, no op
// for rows, no result rows (or none left after the --op filter), ranks unknown.
NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file,
                              const NcclTestsOptions& opt);
NcclTestsLog load_nccl_tests(const std::string& path, const NcclTestsOptions& opt);

}  // namespace zerosim::calib
