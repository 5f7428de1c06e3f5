// `simulate --memory`: the memory per GPU of one scenario as zerosim estimates it (by component,
// with what each counts) beside DeepSpeed's own ZeRO-3 estimator for the same model and cluster
// (sim/memory/deepspeed_estimate.hpp, the table estimate_zero3_model_states_mem_needs_all_live
// prints), and the difference term by term against the estimator's row for the scenario's offload
// settings: model states, gathered weights, the optimizer step's FP32 gradients, and what the
// estimator leaves out (it counts model states only).
#pragma once
#include <string>

#include "sim/result/step_result.hpp"

namespace zerosim::cli {

std::string memory_view(const StepResult& r);

}  // namespace zerosim::cli
