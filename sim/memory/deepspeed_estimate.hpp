// DeepSpeed's ZeRO-3 memory estimator, as its code computes and prints it
// (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs and
// estimate_zero3_model_states_mem_needs_all_cold, which _all_live calls with the model's counts;
// the same in 0.10.0, 0.13.2 and 0.19.5): model states only, per GPU and per CPU (one node's host),
// for the six combinations of offload_param, offload_optimizer and zero_init it tabulates.
//   no offload:         GPU 4·L + int(18·P / G),  CPU 4·L·g·f (zero_init) or 4·P·g·f
//   optimizer to CPU:   GPU 4·L + int(2·P / G),   CPU 16·P/n·f (zero_init) or max(4g, 16/n)·P·f
//   both to CPU:        GPU 4·L,                  CPU 18·P/n·f (zero_init) or max(4g, 18/n)·P·f
// P total parameters, L the largest layer's (one module's own, LargestLayer), G GPUs, g GPUs per
// node, n nodes, f additional_buffer_factor (1.5). Bytes; the printed "GB" are GiB (/ 2^30).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zerosim {

struct Zero3EstimateRow {
  bool offload_param = false, offload_optimizer = false, zero_init = true;
  std::int64_t cpu_bytes = 0, gpu_bytes = 0;
  // DeepSpeed's option text: "offload_param=cpu , offload_optimizer=cpu , zero_init=1".
  std::string options() const;
};

struct Zero3EstimateInputs {
  std::int64_t total_params = 0, largest_layer_params = 0;
  int gpus_per_node = 1, nodes = 1;
  double additional_buffer_factor = 1.5;
};

// estimate_zero3_model_states_mem_needs for one combination of options.
Zero3EstimateRow zero3_estimate(const Zero3EstimateInputs& in, bool offload_optimizer,
                                bool offload_param, bool zero_init);
// The six rows in the order DeepSpeed prints them (both offloaded, optimizer only, none; each
// with zero_init 1 then 0).
std::vector<Zero3EstimateRow> zero3_estimate_table(const Zero3EstimateInputs& in);
// The text estimate_zero3_model_states_mem_needs_all_cold prints, line for line.
std::string format_zero3_estimate(const Zero3EstimateInputs& in);

}  // namespace zerosim
