// What to change when no configuration fits in GPU memory. ZeRO-3 shards the model states
// (FP16 weights and gradients, FP32 optimizer states) over every GPU, so they shrink with more
// nodes; the rest of the memory (activations, gathered weights, buckets, hpZ's secondary copy,
// the reserve) does not. From the candidate that needs the least memory this says how many nodes
// would fit it, or that more nodes cannot help and what can.
#pragma once
#include <string>

#include "sim/result/step_result.hpp"

namespace zerosim::plan {

// Model-state bytes per GPU that more GPUs divide: the optimizer states (stages 1-3), the FP16
// gradients (stages 2-3) and weights (stage 3); none under HSDP, whose shard group is fixed.
double sharded_bytes(const StepResult& r);

// ZeRO-1/2 and HSDP keep on each GPU model states that ZeRO-3 divides over every GPU.
bool zero3_shards_more(const Strategy& s);

// Nodes of `gpus_per_node` GPUs on which `r`'s configuration fits, all else equal; 0 when no node
// count can make it fit (its unsharded part alone exceeds the GPU).
long long nodes_to_fit(const StepResult& r);

// A few lines for the user: the closest configuration's need against the GPU's memory and the
// ways forward (more nodes, offloading to the CPU, a shorter sequence, activation checkpointing).
std::string no_fit_advice(const StepResult& closest, const std::string& description);

// The ways forward alone, for a configuration `r` that does not fit.
std::string ways_to_fit(const StepResult& r);

}  // namespace zerosim::plan
