// Strategy: ZeRO stages 1, 2 and 3, hybrid sharding (HSDP: stage 3 within groups of shard_size
// ranks, replicated across the groups), and the ZeRO++ components (qwZ, hpZ, qgZ) of stage 3, each
// switchable, plus the DeepSpeed knobs that shape the step (overlap, bucket sizes, prefetch,
// micro-batch, accumulation). From `--strategy zero3+qwz+hpz` or a DeepSpeed config (strictly
// read: unknown zero_optimization keys and ZeRO++ keys outside stage 3 are InputError).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/strategy/deepspeed_version.hpp"

namespace zerosim {

// Where DeepSpeed keeps a state it offloads (zero_optimization.offload_optimizer / offload_param
// "device"): on the GPU (none), in host memory (cpu, ZeRO-Offload) or on the node's NVMe drives
// (nvme, ZeRO-Infinity).
enum class OffloadDevice : std::uint8_t { None, Cpu, Nvme };
const char* to_string(OffloadDevice d);

struct Strategy {
  // 1: optimizer states partitioned; 2: gradients too; 3: parameters too (gathered per module).
  int stage = 3;
  bool hsdp = false;   // stage 3 within groups of shard_size consecutive ranks (DeepSpeed's MiCS)
  int shard_size = 0;  // HSDP group size S; 0 = GPUs per node (resolved against the cluster)
  bool qwz = false;    // INT8 block-quantized weight all-gather
  bool hpz = false;    // secondary intra-node weight partition
  bool qgz = false;    // INT4 two-hop all-to-all gradient reduction
  int hpz_size = 0;  // secondary partition size k; 0 = GPUs per node (resolved against the cluster)
  int weight_bits = 8;
  int grad_bits = 4;
  std::int64_t quant_block = 4096;  // elements per FP32 scale (the paper: blocks of 4k-8k elements)
  int qgz_chunks = 1;               // > 1: pipeline qgZ's two hops over this many chunks

  // DeepSpeed stage-3 knobs (element counts, DeepSpeed's defaults). kAuto: "auto" in a config,
  // which Hugging Face's Trainer fills from the model (resolve_auto).
  static constexpr std::int64_t kAuto = -1;
  bool overlap_comm = true;
  std::int64_t reduce_bucket_elems = 500'000'000;
  std::int64_t prefetch_bucket_elems = 50'000'000;
  std::int64_t max_live_params = 1'000'000'000;
  // stage3_max_reuse_distance: a module's weights stay gathered until its next run when fewer
  // parameters run in between (fetch_trace.hpp).
  std::int64_t max_reuse_distance = 1'000'000'000;
  // Stages 1 and 2: the updated 16-bit parameters are all-gathered in buckets of this many
  // elements.
  std::int64_t allgather_bucket_elems = 500'000'000;
  // The DeepSpeed release whose rules run (hpZ's secondary reads, qgZ's fallback):
  // --deepspeed-version.
  DeepSpeedVersion deepspeed_version;
  int grad_comm_bytes = 2;  // bytes per gradient element of the reduce-scatter
                            // (communication_data_type; default: the training dtype)

  // From a DeepSpeed config only (0 = not given: the command line's value stands).
  int micro_batch_sequences = 0;
  int grad_accum = 0;
  std::int64_t train_batch_size = 0;  // sequences per optimizer step over all GPUs
  std::string dtype = "fp16";         // "fp16" | "bf16" | "auto" (resolve_auto: by GPU generation)
  int auto_dtypes = 0;                // with "auto": bit 0 fp16, bit 1 bf16 may be chosen
  std::string source = "--strategy";
  // ZeRO-Offload / ZeRO-Infinity (DeepSpeed config only). offload_optimizer: the FP32 master
  // weights and Adam moments of the rank's partition live off the GPU and CPU Adam updates them
  // (stages 1-3); offload_param: the 16-bit parameter partition lives off the GPU (stage 3).
  OffloadDevice offload_optimizer = OffloadDevice::None;
  OffloadDevice offload_param = OffloadDevice::None;
  // pin_memory of the blocks offloading something: false (DeepSpeed's default) is said in the
  // result's warnings (pageable copies are priced as pinned ones). Not echoed in results.
  bool offload_pageable = false;
  // Stage-3 keys a config gives that the step model reads but does not model, said in the
  // result's warnings with what is modelled instead. Not echoed in results.
  static constexpr int kUnmodelledPersistence = 2;
  int unmodelled_keys = 0;

  bool operator==(const Strategy&) const = default;  // memo keys (LoweringCache)
  // Canonical: "zero1", "zero2", "hsdp", "zero3", "zeropp", "zero3+qwz+hpz", ...
  std::string name() const;
  // Ranks one parameter shard is spread over: the world (stages 1-3) or the HSDP group.
  int shard_ranks(int world) const { return hsdp ? shard_size : world; }
  bool offloads() const {
    return offload_optimizer != OffloadDevice::None || offload_param != OffloadDevice::None;
  }
};

// "zero1" | "zero2" | "hsdp" | "zero3" | "zeropp" | "zero3+qwz" | "zero3+hpz+qgz" | ... (components
// in any order, each once).
Strategy parse_strategy(const std::string& text, const std::string& flag = "--strategy");
// A DeepSpeed JSON config (the whole file).
Strategy parse_deepspeed(const json& j, const std::string& file);
Strategy load_deepspeed(const std::string& path);
// Fills what a config left "auto" as Hugging Face's Trainer does (reduce_bucket_size = hidden^2,
// stage3_prefetch_bucket_size = 0.9 hidden^2) and an "auto" dtype by the GPU (bf16 from Ampere on,
// fp16 on Volta). Returns a sentence per value filled, for the result's warnings.
std::vector<std::string> resolve_auto(Strategy& s, std::int64_t hidden, bool gpu_has_bf16);
json to_json(const Strategy& s);

}  // namespace zerosim
