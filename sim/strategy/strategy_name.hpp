// The strategy vocabulary: every strategy zerosim simulates, named once. A strategy is a kind (what
// is sharded and how) and, for ZeRO-3, the ZeRO++ techniques it switches on. Its flag and JSON
// name ("zero3+qwz+hpz", "fsdp-grad-op"), its display name ("ZeRO-3 + qwZ + hpZ", "FSDP
// SHARD_GRAD_OP"), its family (the framework whose runtime its lowering follows) and its sort
// rank are defined here and nowhere else: the CLI, the planner, the result reader, the reports,
// sweeps and the Python module read strategies through StrategyId.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zerosim {

// The framework whose runtime a strategy's lowering follows (one lowering file per family).
enum class StrategyFamily : std::uint8_t { DeepSpeed, Fsdp };
const char* to_string(StrategyFamily f);  // "deepspeed" | "fsdp"

// DeepSpeed: ZeRO stages 1, 2 and 3, and HSDP (stage 3 within groups of ranks, replicated across
// the groups: MiCS). PyTorch FSDP's ShardingStrategy (torch/distributed/fsdp/api.py):
// FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD; and FSDP2 (fully_shard, per-parameter sharding).
enum class StrategyKind : std::uint8_t {
  Zero1,
  Zero2,
  Zero3,
  Hsdp,
  FsdpFullShard,
  FsdpShardGradOp,
  FsdpHybridShard,
  Fsdp2
};

struct StrategyId {
  StrategyKind kind = StrategyKind::Zero3;
  bool qwz = false, hpz = false, qgz = false;  // ZeRO++'s techniques (Zero3 only)
  bool operator==(const StrategyId&) const = default;

  StrategyFamily family() const;
  // Flag and JSON name: "zero1", "zero2", "hsdp", "zero3", "zeropp", "zero3+qwz+hpz", "fsdp",
  // "fsdp-grad-op", "fsdp-hybrid", "fsdp2".
  std::string name() const;
  // "ZeRO-1", "ZeRO-2", "HSDP", "ZeRO-3", "ZeRO++", "ZeRO-3 + qwZ + hpZ", "FSDP FULL_SHARD",
  // "FSDP SHARD_GRAD_OP", "FSDP HYBRID_SHARD", "FSDP2 fully_shard".
  std::string display() const;
  // Sort order in tables and charts: ZeRO-1, ZeRO-2, ZeRO-3, its single techniques (qwZ, hpZ,
  // qgZ), pairs, ZeRO++, HSDP, then FSDP's FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, FSDP2.
  int rank() const;
  int techniques() const { return qwz + hpz + qgz; }
};

// A --strategy value: a name above, "zero++" for "zeropp", or zero3 with its techniques joined by
// '+' in any order, each once. InputError naming `flag` otherwise.
StrategyId parse_strategy_id(std::string_view text, const std::string& flag = "--strategy");
// The same, without an error: nullopt for a name outside the vocabulary.
std::optional<StrategyId> find_strategy_id(std::string_view text);

}  // namespace zerosim
