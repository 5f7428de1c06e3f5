// Strategy: a strategy of the vocabulary (strategy_name.hpp) with the settings that shape its
// step. DeepSpeed: ZeRO stages 1, 2 and 3, hybrid sharding (HSDP: stage 3 within groups of
// shard_size ranks, replicated across the groups), and the ZeRO++ components (qwZ, hpZ, qgZ) of
// stage 3, each switchable, plus the DeepSpeed knobs (overlap, bucket sizes, prefetch,
// micro-batch, accumulation). PyTorch FSDP: FULL_SHARD, SHARD_GRAD_OP and HYBRID_SHARD with FSDP1's
// knobs (FsdpOptions), and FSDP2's fully_shard with reshard_after_forward. From `--strategy
// zero3+qwz+hpz` (or fsdp, ...) or a DeepSpeed config (strictly read by deepspeed_config.hpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/choice.hpp"
#include "sim/core/json_io.hpp"
#include "sim/strategy/deepspeed_version.hpp"
#include "sim/strategy/strategy_name.hpp"

namespace zerosim {

// Where DeepSpeed keeps a state it offloads (zero_optimization.offload_optimizer / offload_param
// "device"): on the GPU (none), in host memory (cpu, ZeRO-Offload) or on the node's NVMe drives
// (nvme, ZeRO-Infinity).
enum class OffloadDevice : std::uint8_t { None, Cpu, Nvme };
const char* to_string(OffloadDevice d);

// PyTorch FSDP's ShardingStrategy of an FSDP1 strategy (torch/distributed/fsdp/api.py), or
// FullyShard: FSDP2's fully_shard (per-parameter sharding, _fully_shard/); None: a DeepSpeed
// strategy.
enum class FsdpSharding : std::uint8_t { None, FullShard, ShardGradOp, HybridShard, FullyShard };
// "FULL_SHARD" | "SHARD_GRAD_OP" | "HYBRID_SHARD" | "fully_shard" | "NONE"
const char* to_string(FsdpSharding s);
// FSDP's BackwardPrefetch (api.py): issue the next unit's all-gather before the current unit's
// gradient computation (BACKWARD_PRE), after it (BACKWARD_POST), or not at all (None).
enum class BackwardPrefetch : std::uint8_t { Pre, Post, None };
const char* to_string(BackwardPrefetch p);  // "BACKWARD_PRE" | "BACKWARD_POST" | "NONE"
// The flag's spellings (--fsdp-backward-prefetch).
inline std::span<const ChoiceName<BackwardPrefetch>> choice_table(BackwardPrefetch) {
  static constexpr ChoiceName<BackwardPrefetch> kNames[] = {{BackwardPrefetch::Pre, "pre"},
                                                            {BackwardPrefetch::Post, "post"},
                                                            {BackwardPrefetch::None, "none"}};
  return kNames;
}
// A MixedPrecision dtype of FSDP as a scenario gives it (--fsdp-param-dtype, --fsdp-reduce-dtype):
// Auto is the training dtype for param_dtype, and param_dtype for reduce_dtype (PyTorch's None).
enum class FsdpDtype : std::uint8_t { Auto, Bf16, Fp16, Fp32 };
inline std::span<const ChoiceName<FsdpDtype>> choice_table(FsdpDtype) {
  static constexpr ChoiceName<FsdpDtype> kNames[] = {{FsdpDtype::Auto, "auto"},
                                                     {FsdpDtype::Bf16, "bf16"},
                                                     {FsdpDtype::Fp16, "fp16"},
                                                     {FsdpDtype::Fp32, "fp32"}};
  return kNames;
}

// FSDP1's knobs (FullyShardedDataParallel's arguments), with PyTorch's defaults.
struct FsdpOptions {
  FsdpSharding sharding = FsdpSharding::None;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  bool forward_prefetch = false;
  bool limit_all_gathers = true;  // the rate limiter (_limiter_utils.py)
  int param_bytes = 2;  // MixedPrecision.param_dtype: 2 (bf16, fp16) or 4 (fp32, or none set)
  // FSDP2's reshard_after_forward of the non-root modules (_fully_shard.py, fully_shard): true
  // (kReshardToShards: free to the shard after forward, gather again in backward), false (0: keep
  // the unsharded parameters until backward) or an int n (reshard to n ranks: the backward's
  // all-gather runs within groups of n). The root keeps its parameters (None's rule).
  static constexpr int kReshardToShards = -1;
  int reshard_after_forward = kReshardToShards;
  bool operator==(const FsdpOptions&) const = default;
};

struct Strategy {
  // 1: optimizer states partitioned; 2: gradients too; 3: parameters too (gathered per module).
  int stage = 3;
  bool hsdp = false;  // stage 3 within groups of shard_size consecutive ranks (DeepSpeed's MiCS)
  // Shard group size S of a hybrid strategy; 0 = GPUs per node for hsdp and fsdp-hybrid (resolved
  // against the cluster), a 1-D mesh over the world for fsdp2.
  int shard_size = 0;
  bool qwz = false;  // INT8 block-quantized weight all-gather
  bool hpz = false;  // secondary intra-node weight partition
  bool qgz = false;  // INT4 two-hop all-to-all gradient reduction
  int hpz_size = 0;  // secondary partition size k; 0 = GPUs per node (resolved against the cluster)
  int weight_bits = 8;
  int grad_bits = 4;
  std::int64_t quant_block = 4096;  // elements per FP32 scale (the paper: blocks of 4k-8k elements)
  int qgz_chunks = 1;               // > 1: pipeline qgZ's two hops over this many chunks

  // DeepSpeed stage-3 knobs (element counts, DeepSpeed's defaults). kAuto: "auto" in a config,
  // which Hugging Face's Trainer fills from the model (resolve_auto).
  static constexpr std::int64_t kAuto = -1;
  bool overlap_comm = true;
  // contiguous_gradients (stage 3): each gradient smaller than the bucket is copied into the
  // bucket's flat buffer on the reduction stream (stage3.py __add_grad_to_ipg_bucket); false
  // leaves it where autograd wrote it.
  bool contiguous_gradients = true;
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
  // Keys the config gives that do not change the modelled step ("zero_optimization.aio", ...),
  // said in the result's warnings (deepspeed_config.hpp). Not echoed in results.
  std::vector<std::string> keys_without_effect;
  // sub_group_size: stage 3's optimizer steps its partition in sub-groups of at least this many
  // elements, each with an FP32 copy of its gradients (DeepSpeed's default 1e9).
  std::int64_t sub_group_elems = 1'000'000'000;

  // PyTorch FSDP (sharding not None); grad_comm_bytes is its MixedPrecision.reduce_dtype.
  FsdpOptions fsdp;

  bool operator==(const Strategy&) const = default;  // memo keys (LoweringCache)
  StrategyId id() const;
  StrategyFamily family() const {
    return fsdp.sharding == FsdpSharding::None ? StrategyFamily::DeepSpeed : StrategyFamily::Fsdp;
  }
  // StrategyId::name: "zero1", "zero2", "hsdp", "zero3", "zeropp", "zero3+qwz+hpz", "fsdp", ...
  std::string name() const { return id().name(); }
  // Sharded within groups of shard_size ranks and replicated across them: HSDP, HYBRID_SHARD,
  // and FSDP2 on a 2-D DeviceMesh (replicate, shard), which has a shard_size only when given.
  bool hybrid() const {
    return hsdp || fsdp.sharding == FsdpSharding::HybridShard ||
           (fsdp.sharding == FsdpSharding::FullyShard && shard_size > 0);
  }
  // A strategy that is always hybrid (its shard_size defaults to GPUs per node).
  bool hybrid_by_name() const { return hsdp || fsdp.sharding == FsdpSharding::HybridShard; }
  // Ranks one parameter shard is spread over: the world, or the group of a hybrid strategy.
  int shard_ranks(int world) const { return hybrid() ? shard_size : world; }
  bool offloads() const {
    return offload_optimizer != OffloadDevice::None || offload_param != OffloadDevice::None;
  }
};

// The strategy of a vocabulary entry with its defaults (DeepSpeed's, or PyTorch FSDP's).
Strategy strategy_of(const StrategyId& id);
// A --strategy value (parse_strategy_id): strategy_of its id.
Strategy parse_strategy(const std::string& text, const std::string& flag = "--strategy");
json to_json(const Strategy& s);

}  // namespace zerosim
