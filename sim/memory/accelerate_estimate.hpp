// Hugging Face Accelerate's `accelerate estimate-memory` table, as accelerate/commands/estimate.py
// computes it (gather_data, estimate_command): for each dtype, the largest layer, the total size
// and the size of training with Adam, from the model's FP32 sizes (an empty model is built in FP32:
// 4 bytes per parameter; buffers, a few KB of rotary frequencies, are left out here).
//   float32: L4, T4, 4·T4      float16: L4/2, T4/2, 4·T4/2
//   int8:    L4/4, T4/4, 4·T4/4      int4: L4/8, T4/8, 4·T4/8
// with T4 = 4·P and L4 = 4·L (P parameters, L the largest layer's: largest_unsplit_module).
// Training with Adam is 4x the model's size in that dtype. Sizes print with convert_bytes:
// divided by 1024 until below 1024, rounded to 2 decimals as Python prints them, labelled
// bytes/KB/MB/GB/TB (binary units under decimal names).
// Accelerate is not in shared/reference: this follows the released estimate.py, written from it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zerosim {

struct AccelerateEstimateRow {
  std::string dtype;  // "float32", "float16", "int8", "int4"
  double largest_layer_bytes = 0, total_bytes = 0, training_bytes = 0;
};

// The four rows in the order Accelerate prints them (its default --dtypes).
std::vector<AccelerateEstimateRow> accelerate_estimate(std::int64_t total_params,
                                                       std::int64_t largest_layer_params);
// convert_bytes: "14.96 GB", "2.0 GB", "512 bytes".
std::string accelerate_convert_bytes(double bytes);
// The table: title, header and a row per dtype, columns padded (Accelerate draws box lines
// around the same cells).
std::string format_accelerate_estimate(const std::string& model_name, std::int64_t total_params,
                                       std::int64_t largest_layer_params);

}  // namespace zerosim
