// A sweep's results as a terminal table: one row per result in scenario order, a column per swept
// axis with more than one value (its flag without "--"), then the step time, throughput, TFLOPS
// and MFU per GPU, peak memory against capacity and whether it fits. What `zerosim sweep` prints
// when no JSON document is asked for on standard output.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

class TerminalTable {
 public:
  // `axis_names`: the columns that tell the rows apart ("nics-per-node", "strategy").
  explicit TerminalTable(std::vector<std::string> axis_names);
  // One row: the value on each axis (as many as axis_names) and its result.
  void add(const std::vector<std::string>& axis_values, const ResultView& r);
  // Columns padded to their widest cell: text left-aligned, numbers right-aligned; a trailing
  // newline per row. No rows: the header alone.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::size_t axes_;
};

}  // namespace zerosim::report
