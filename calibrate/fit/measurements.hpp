// Calibration measurements: what zerosim-calibrate and `zerosim calibrate import-nccl-tests` write
// and `zerosim calibrate fit` reads. A measurement file is JSON lines: line 1 is the header
//   {"format": "zerosim-measurements", "version": 1, "provenance": {...free-form...}}
// and every further non-blank line is one record, written (and fsynced) as soon as it is measured
// so an interrupted run keeps what it measured:
//   {"kind": "collective", "op": "all_gather", "ranks": 8, "nodes": 1, "tier": "intra_node",
//    "bytes": 1048576, "time_s": 2.1e-5, "algbw_GBps": 49.9, "busbw_GBps": 43.7}
//   (optional "gpus_per_node": ranks on each node; when absent readers take ceil(ranks / nodes))
//   {"kind": "kernel", "name": "quantize_int8", "bytes": 3145728, "time_s": 1.2e-6}   // bytes
//   read+written
//   {"kind": "gemm", "m": 2048, "n": 6144, "k": 6144, "time_s": 2.1e-4, "dtype": "bf16"}
// Collective bytes follow nccl-tests' size column (all_gather: total output per rank;
// reduce_scatter: total input per rank; all_reduce: buffer; all_to_all: total sent per rank;
// send_recv: bytes sent).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"

namespace zerosim::calib {

constexpr int kMeasurementsVersion = 1;
constexpr const char* kMeasurementsFormat = "zerosim-measurements";
// Records `calibrate fit` reads in all (README, Limits): the fit simulates each collective record
// on its cluster, about 50 ms each; more are refused before the file's records are parsed.
constexpr std::size_t kMaxMeasurementRecords = 1000;

struct CollectiveRecord {
  std::string op;  // all_gather | reduce_scatter | all_reduce | all_to_all | send_recv
  int ranks = 0;
  int nodes = 1;
  int gpus_per_node = 0;    // ranks per node; 0 = not known (written only when > 0)
  int gpus_per_thread = 1;  // GPUs one benchmark thread drove (nccl-tests' -g; written when > 1)
  // The NCCL release the record ran ("MAJOR.MINOR[.PATCH]"): calibrate fit prices it with that
  // release's tuning table. Empty: the fit's (--nccl-version, or the base profile's).
  std::string nccl_version;
  std::string tier;  // "intra_node" when nodes == 1, else "inter_node"
  std::uint64_t bytes = 0;
  double time_s = 0;
  double algbw_GBps = 0;  // bytes / time_s / 1e9
  double busbw_GBps = 0;  // algbw * nccl-tests' bus factor
  std::string where;      // "file:line" for messages
};

struct KernelRecord {
  std::string name;         // a CostProfile kernel name
  std::uint64_t bytes = 0;  // bytes read + written
  double time_s = 0;
  std::string where;
};

struct GemmRecord {
  std::int64_t m = 0, n = 0, k = 0;
  double time_s = 0;
  std::string dtype = "bf16";
  std::string where;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

struct Measurements {
  std::vector<std::string> files;   // sources, in the order read
  json provenance = json::array();  // one provenance object per file
  std::vector<CollectiveRecord> collectives;
  std::vector<KernelRecord> kernels;
  std::vector<GemmRecord> gemms;
};

// The tier a collective over `nodes` nodes runs on.
std::string tier_for_nodes(int nodes);

// Header line and record lines (no trailing newline).
std::string measurements_header(const json& provenance);
json to_json(const CollectiveRecord& r);
json to_json(const KernelRecord& r);
json to_json(const GemmRecord& r);

// Strict parse of one measurement file, appended to `out`. Errors are InputError("file:line", JSON
// path, rule): missing header, unknown kinds or keys, non-positive sizes/times, algbw/busbw
// inconsistent with bytes/time (beyond 2%: nccl-tests rounds to two decimals), unknown op/kernel
// names, tier not matching nodes.
void load_measurements(const std::string& path, Measurements& out);
void parse_measurements_text(const std::string& text, const std::string& file, Measurements& out);

// Appends lines to a measurement file and fsyncs after each, so a crash loses at most the line
// being written. Creates the file with the header if it does not exist or is empty.
class MeasurementWriter {
 public:
  MeasurementWriter(const std::string& path,
                    const json& provenance);  // throws InputError if unwritable
  ~MeasurementWriter();
  MeasurementWriter(const MeasurementWriter&) = delete;
  MeasurementWriter& operator=(const MeasurementWriter&) = delete;
  void append(const json& record);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace zerosim::calib
