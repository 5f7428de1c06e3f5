// Memory model: bytes per GPU of one ZeRO step, by component, against the GPU's capacity. Model
// states follow DeepSpeed with mixed-precision Adam: 2 (FP16 params) + 2 (FP16 grads) + 12 (FP32
// master, momentum, variance) bytes per parameter; stage 3 divides all three over the W
// data-parallel ranks (HSDP over its group of S), stage 2 the gradients and optimizer states,
// stage 1 the optimizer states only; hpZ adds the secondary FP16 copy 2·Ψ/k; the rest is transient
// (gathered modules in flight under stage 3, buckets, quantization buffers, activations) plus the
// framework's reserved bytes.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/strategy/buckets.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/module_cache.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

struct MemoryInputs {
  const ModelShape* model = nullptr;
  const Strategy* strategy = nullptr;  // hpz_size and shard_size resolved (> 0 when used)
  int world = 1;
  int gpus_per_node = 1;
  std::int64_t tokens = 0;  // per GPU per micro-step
  int seq = 0;
  bool checkpointing = true;
  AttentionImpl attention = AttentionImpl::Eager;  // flash keeps no s x s scores
  int prefetch_depth = 1;                          // modules gathered ahead of the running one
  // Elements gathered ahead of the running module at most (DeepSpeed's coordinator, from the
  // lowering); < 0: prefetch_depth modules of the largest size.
  double prefetched_elems = -1;
  // Gathered elements live at once at most, the held and the in-flight ones of the same run (the
  // lowering's); < 0: the most held plus the most prefetched, which may fall at different runs.
  double live_elems = -1;
  // Stage 3's largest all_gather_coalesced call (the lowering's): its elements and qwZ's FP32
  // scales for it over the shard group; < 0: the largest module's.
  double largest_call_elems = -1;
  double largest_call_scale_bytes = 0;
  double capacity_bytes = 0;
  double reserved_bytes = 0;
  // Optional, the step's lowered buckets (same modules and bucket rule): saves building them again.
  // Null: estimate_memory derives them.
  const std::vector<GradBucket>* buckets = nullptr;
  // Optional, the most gathered weights a stage-3 run holds (max_held_elems of the step's fetch
  // trace: the lowering's LoweredStep::max_held_elems). < 0: estimate_memory derives the trace
  // (same modules, checkpointing and reuse distance) and computes it.
  std::int64_t max_held_elems = -1;
  // Optional, the context's modules and parameter counts. Null: built afresh (the same values).
  ModuleCache* modules = nullptr;
};

struct MemoryEstimate {
  std::vector<std::pair<std::string, double>> components;  // fixed order, bytes per GPU
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = true;
  std::string warning;  // empty when it fits; otherwise names the overflow and the largest parts

  double component(const std::string& name) const;  // 0 if absent
};

MemoryEstimate estimate_memory(const MemoryInputs& in);

// What ZeRO-Offload keeps off one rank's GPU, bytes per rank (psi parameters over S shard ranks).
// offload_optimizer cpu: the FP32 master weights and Adam moments (12 psi / S) and the FP32
// gradient partition CPU Adam reads (4 psi / S, DeepSpeed's pinned host gradient buffer) in host
// memory; nvme: the 12 psi / S on the drives (the host's swap buffers are not counted).
// offload_param cpu: the 16-bit partition (2 psi / S) in host memory; nvme: on the drives.
struct OffloadFootprint {
  double host_bytes = 0, nvme_bytes = 0;
};
OffloadFootprint offload_footprint(const Strategy& s, double psi, int world);
json to_json(const MemoryEstimate& m);

}  // namespace zerosim
