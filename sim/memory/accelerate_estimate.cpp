// Accelerate's estimate-memory table: see accelerate_estimate.hpp.
#include "sim/memory/accelerate_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace zerosim {

std::vector<AccelerateEstimateRow> accelerate_estimate(std::int64_t total_params,
                                                       std::int64_t largest_layer_params) {
  const double total = 4.0 * static_cast<double>(total_params);
  const double largest = 4.0 * static_cast<double>(largest_layer_params);
  std::vector<AccelerateEstimateRow> rows;
  for (const auto& [dtype, divisor] : std::array<std::pair<const char*, double>, 4>{
           {{"float32", 1}, {"float16", 2}, {"int8", 4}, {"int4", 8}}})
    rows.push_back({dtype, largest / divisor, total / divisor, 4 * total / divisor});
  return rows;
}

std::string accelerate_convert_bytes(double bytes) {
  static const std::array<const char*, 5> kUnits = {"bytes", "KB", "MB", "GB", "TB"};
  double size = bytes;
  std::string unit = "PB";
  for (const char* u : kUnits) {
    if (size < 1024.0) {
      unit = u;
      break;
    }
    size /= 1024.0;
  }
  // Python's f"{round(size, 2)}": an int stays an int (bytes of an integral size); a float prints
  // its shortest form, at least one decimal ("2.0", "14.9", "14.96").
  if (unit == "bytes" && size == std::floor(size)) return fmt::format("{:.0f} bytes", size);
  std::string text = fmt::format("{:.2f}", size);
  while (text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
  return text + " " + unit;
}

std::string format_accelerate_estimate(const std::string& model_name, std::int64_t total_params,
                                       std::int64_t largest_layer_params) {
  std::vector<std::array<std::string, 4>> cells = {
      {"dtype", "Largest Layer", "Total Size", "Training using Adam"}};
  for (const auto& r : accelerate_estimate(total_params, largest_layer_params))
    cells.push_back({r.dtype, accelerate_convert_bytes(r.largest_layer_bytes),
                     accelerate_convert_bytes(r.total_bytes),
                     accelerate_convert_bytes(r.training_bytes)});
  std::array<std::size_t, 4> width{};
  for (const auto& row : cells)
    for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], row[c].size());
  std::string o = fmt::format("Memory Usage for loading `{}`\n", model_name);
  for (const auto& row : cells)
    o += fmt::format("  {:<{}}  {:>{}}  {:>{}}  {:>{}}\n", row[0], width[0], row[1], width[1],
                     row[2], width[2], row[3], width[3]);
  return o;
}

}  // namespace zerosim
