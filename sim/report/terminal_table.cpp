// TerminalTable: see terminal_table.hpp.
#include "sim/report/terminal_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace zerosim::report {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

TerminalTable::TerminalTable(std::vector<std::string> axis_names)
    : header_(std::move(axis_names)), axes_(header_.size()) {
  for (const char* h : {"step s", "tokens/s", "TFLOPS/GPU", "MFU", "peak GiB", "fits"})
    header_.emplace_back(h);
}

void TerminalTable::add(const std::vector<std::string>& axis_values, const ResultView& r) {
  std::vector<std::string> row(axis_values.begin(), axis_values.end());
  row.resize(axes_);
  row.push_back(fmt::format("{:.3f}", r.step_time_s));
  row.push_back(fmt::format("{:.0f}", r.tokens_per_s));
  row.push_back(fmt::format("{:.1f}", r.tflops_per_gpu));
  row.push_back(format_utilization(r.mfu));
  row.push_back(
      fmt::format("{:.2f} / {:.0f}", r.peak_bytes_per_gpu / kGiB, r.capacity_bytes / kGiB));
  row.emplace_back(r.fits ? "yes" : "NO");
  rows_.push_back(std::move(row));
}

std::string TerminalTable::render() const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool text = c < axes_ || c + 1 == cells.size();  // axis values and "fits"
      out += c == 0 ? "" : "  ";
      out += text ? fmt::format("{:<{}}", cells[c], width[c])
                  : fmt::format("{:>{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace zerosim::report
