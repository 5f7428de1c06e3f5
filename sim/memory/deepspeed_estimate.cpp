#include "sim/memory/deepspeed_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace zerosim {

std::string Zero3EstimateRow::options() const {
  // DeepSpeed pads the device name to 4 characters: f'{OffloadDeviceEnum.cpu:4}' is "cpu ".
  return fmt::format("offload_param={}, offload_optimizer={}, zero_init={}",
                     offload_param ? "cpu " : "none", offload_optimizer ? "cpu " : "none",
                     zero_init ? 1 : 0);
}

Zero3EstimateRow zero3_estimate(const Zero3EstimateInputs& in, bool offload_optimizer,
                                bool offload_param, bool zero_init) {
  const double P = static_cast<double>(in.total_params);
  const double L = static_cast<double>(in.largest_layer_params);
  const double g = in.gpus_per_node, f = in.additional_buffer_factor;
  const double gpus = static_cast<double>(in.nodes) * in.gpus_per_node;
  const double per_node = 1.0 / in.nodes;  // DeepSpeed's gpus_factor
  const double largest = 4 * L;
  // Python's int() of a non-negative float: truncation.
  const auto py_int = [](double x) { return static_cast<std::int64_t>(x); };
  double cpu = 0, gpu = 0;
  if (offload_optimizer) {
    const double states = offload_param ? 18 : 16;  // bytes per parameter on the host
    gpu = offload_param ? largest : largest + static_cast<double>(py_int(2 * P / gpus));
    cpu = zero_init ? P * states * per_node * f : P * std::max(4 * g, states * per_node) * f;
  } else {
    gpu = largest + static_cast<double>(py_int(18 * P / gpus));
    cpu = zero_init ? L * 4 * g * f : P * 4 * g * f;
  }
  return {offload_param && offload_optimizer, offload_optimizer, zero_init, py_int(cpu),
          py_int(gpu)};
}

std::vector<Zero3EstimateRow> zero3_estimate_table(const Zero3EstimateInputs& in) {
  std::vector<Zero3EstimateRow> rows;
  for (bool cpu_offload : {true, false})
    for (bool cpu_offload_params : {true, false}) {
      if (!cpu_offload && cpu_offload_params) continue;
      for (bool zero_init : {true, false})
        rows.push_back(zero3_estimate(in, cpu_offload, cpu_offload_params, zero_init));
    }
  return rows;
}

std::string format_zero3_estimate(const Zero3EstimateInputs& in) {
  std::string o = fmt::format(
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with {} {}, {} {} per node.\n"
      "SW: Model with {}M total params, {}M largest layer params.\n",
      in.nodes, in.nodes > 1 ? "nodes" : "node", in.gpus_per_node,
      in.gpus_per_node > 1 ? "GPUs" : "GPU", in.total_params / 1000000,
      in.largest_layer_params / 1000000);
  o += "  per CPU  |  per GPU |   Options\n";
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  for (const Zero3EstimateRow& r : zero3_estimate_table(in))
    o += fmt::format(" {:7.2f}GB | {:6.2f}GB | {}\n", static_cast<double>(r.cpu_bytes) / kGiB,
                     static_cast<double>(r.gpu_bytes) / kGiB, r.options());
  return o;
}

}  // namespace zerosim
