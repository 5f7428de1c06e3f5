#include "sim/strategy/strategy.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "sim/core/error.hpp"

namespace zerosim {

const char* to_string(FsdpSharding s) {
  switch (s) {
    case FsdpSharding::FullShard:
      return "FULL_SHARD";
    case FsdpSharding::ShardGradOp:
      return "SHARD_GRAD_OP";
    case FsdpSharding::HybridShard:
      return "HYBRID_SHARD";
    case FsdpSharding::FullyShard:
      return "fully_shard";
    case FsdpSharding::None:
      break;
  }
  return "NONE";
}

const char* to_string(BackwardPrefetch p) {
  switch (p) {
    case BackwardPrefetch::Pre:
      return "BACKWARD_PRE";
    case BackwardPrefetch::Post:
      return "BACKWARD_POST";
    case BackwardPrefetch::None:
      break;
  }
  return "NONE";
}

StrategyId Strategy::id() const {
  StrategyId id;
  switch (fsdp.sharding) {
    case FsdpSharding::FullShard:
      id.kind = StrategyKind::FsdpFullShard;
      return id;
    case FsdpSharding::ShardGradOp:
      id.kind = StrategyKind::FsdpShardGradOp;
      return id;
    case FsdpSharding::HybridShard:
      id.kind = StrategyKind::FsdpHybridShard;
      return id;
    case FsdpSharding::FullyShard:
      id.kind = StrategyKind::Fsdp2;
      return id;
    case FsdpSharding::None:
      break;
  }
  id.kind = stage == 1   ? StrategyKind::Zero1
            : stage == 2 ? StrategyKind::Zero2
            : hsdp       ? StrategyKind::Hsdp
                         : StrategyKind::Zero3;
  if (id.kind == StrategyKind::Zero3) {
    id.qwz = qwz;
    id.hpz = hpz;
    id.qgz = qgz;
  }
  return id;
}

Strategy strategy_of(const StrategyId& id) {
  Strategy s;
  switch (id.kind) {
    case StrategyKind::Zero1:
      s.stage = 1;
      break;
    case StrategyKind::Zero2:
      s.stage = 2;
      break;
    case StrategyKind::Hsdp:
      s.hsdp = true;
      break;
    case StrategyKind::Zero3:
      s.qwz = id.qwz;
      s.hpz = id.hpz;
      s.qgz = id.qgz;
      break;
    case StrategyKind::FsdpFullShard:
      s.fsdp.sharding = FsdpSharding::FullShard;
      break;
    case StrategyKind::FsdpShardGradOp:
      s.fsdp.sharding = FsdpSharding::ShardGradOp;
      break;
    case StrategyKind::FsdpHybridShard:
      s.fsdp.sharding = FsdpSharding::HybridShard;
      break;
    case StrategyKind::Fsdp2:
      s.fsdp.sharding = FsdpSharding::FullyShard;
      break;
  }
  return s;
}

Strategy parse_strategy(const std::string& text, const std::string& flag) {
  return strategy_of(parse_strategy_id(text, flag));
}

const char* to_string(OffloadDevice d) {
  switch (d) {
    case OffloadDevice::Cpu:
      return "cpu";
    case OffloadDevice::Nvme:
      return "nvme";
    case OffloadDevice::None:
      break;
  }
  return "none";
}

json to_json(const Strategy& s) {
  json j = json::object();
  j.emplace("name", s.name());
  if (s.hybrid()) j.emplace("shard_size", s.shard_size);
  j.emplace("qwz", s.qwz);
  j.emplace("hpz", s.hpz);
  j.emplace("qgz", s.qgz);
  j.emplace("hpz_size", s.hpz_size);
  j.emplace("weight_bits", s.weight_bits);
  j.emplace("grad_bits", s.grad_bits);
  j.emplace("quant_block_elems", s.quant_block);
  j.emplace("qgz_chunks", s.qgz_chunks);
  j.emplace("overlap_comm", s.overlap_comm);
  j.emplace("reduce_bucket_elems", s.reduce_bucket_elems);
  j.emplace("prefetch_bucket_elems", s.prefetch_bucket_elems);
  j.emplace("max_live_params", s.max_live_params);
  j.emplace("max_reuse_distance", s.max_reuse_distance);
  j.emplace("grad_comm_bytes", s.grad_comm_bytes);
  j.emplace("deepspeed_version", to_string(s.deepspeed_version));
  // The release's rules that ran, for the techniques that are on.
  json rules = json::object();
  if (s.hpz) rules.emplace("hpz_secondary_reads", to_string(hpz_rule(s.deepspeed_version)));
  if (s.qgz)
    rules.emplace("qgz_fallback", qgz_divisibility_fallback(s.deepspeed_version)
                                      ? "1-d and not divisible by 2 x world"
                                      : "1-d");
  j.emplace("deepspeed_rules", std::move(rules));
  j.emplace("dtype", s.dtype);
  j.emplace("source", s.source);
  // Only for FSDP: DeepSpeed's results keep their bytes.
  if (s.fsdp.sharding == FsdpSharding::FullyShard) {
    // FSDP2: no rate limiter, one module prefetched implicitly; reshard_after_forward instead.
    const int r = s.fsdp.reshard_after_forward;
    j.emplace("fsdp", json{{"sharding", to_string(s.fsdp.sharding)},
                           {"reshard_after_forward", r == FsdpOptions::kReshardToShards ? json(true)
                                                     : r == 0 ? json(false)
                                                              : json(r)},
                           {"param_bytes", s.fsdp.param_bytes}});
  } else if (s.family() == StrategyFamily::Fsdp) {
    j.emplace("fsdp", json{{"sharding", to_string(s.fsdp.sharding)},
                           {"backward_prefetch", to_string(s.fsdp.backward_prefetch)},
                           {"forward_prefetch", s.fsdp.forward_prefetch},
                           {"limit_all_gathers", s.fsdp.limit_all_gathers},
                           {"param_bytes", s.fsdp.param_bytes}});
  }
  // Only when offloading: results without it keep their bytes.
  if (s.offload_optimizer != OffloadDevice::None)
    j.emplace("offload_optimizer", to_string(s.offload_optimizer));
  if (s.offload_param != OffloadDevice::None)
    j.emplace("offload_param", to_string(s.offload_param));
  return j;
}

}  // namespace zerosim
