// simulate(): one training step of one scenario, end to end (topology + workload + strategy +
// profile -> StepProgram -> engine -> StepResult). The entry point of `zerosim simulate`, sweeps,
// the planner and the Python module.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/net/network_tier.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/sim_context.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

// Everything that defines one scenario, as flags and sweep lists give it: names of files and
// presets as text, closed choices as their enums (scenario_schema.hpp parses both). Empty / zero
// fields mean "the preset's or the strategy's default".
struct Scenario {
  std::string cluster = "dgx2-v100";  // preset name or file
  int nodes = 0;
  int nics_per_node = 0;
  double nic_gbps = 0;
  std::string fabric;
  double oversubscription = 0;
  std::string model = "gpt-18b";    // preset, workload file or HF config.json
  std::string strategy = "zeropp";  // a name of the strategy vocabulary (strategy_name.hpp)
  std::string deepspeed;  // ds_config.json (overrides strategy, micro-batch, accumulation)
  // FSDP config YAML (fsdp_config_scenario.hpp: sets strategy, --fsdp-* knobs, checkpointing)
  std::string fsdp_config;
  std::string deepspeed_version = "0.19";  // the release whose rules run (deepspeed_version.hpp)
  int hpz_partition = 0;                   // 0: GPUs per node when hpz is on
  int hsdp_size = 0;           // HSDP shard group size; 0: GPUs per node when the strategy is hsdp
  int quant_bits_weights = 8;  // qwZ bits
  int quant_bits_grads = 4;    // qgZ bits
  int qgz_chunks = 1;          // > 1: pipeline qgZ's two all-to-all hops over this many chunks
  // PyTorch FSDP's knobs (FullyShardedDataParallel's arguments, PyTorch's defaults).
  BackwardPrefetch fsdp_backward_prefetch = BackwardPrefetch::Pre;
  bool fsdp_forward_prefetch = false;
  bool fsdp_limit_all_gathers = true;
  FsdpDtype fsdp_param_dtype = FsdpDtype::Auto;
  FsdpDtype fsdp_reduce_dtype = FsdpDtype::Auto;
  std::string fsdp_reshard_after_forward = "true";  // FSDP2: true | false | N (a group size)
  // The micro-batch, in sequences or in tokens per GPU per micro-step (at most one of them; 0: not
  // given, the default of micro_batch.hpp).
  int micro_batch = 0;
  int tokens_per_gpu = 0;
  int seq_len = 0;  // 0: the model's
  int grad_accum = 1;
  std::string profile;  // "" = matching shipped profile
  NetworkTier tier = NetworkTier::Flow;
  bool activation_checkpointing = true;
  AttentionChoice attention = AttentionChoice::Auto;
  // SM sharing: compute runs on the SMs NCCL's collective kernels leave (step_program.hpp SmShare).
  bool sm_share = true;
};

// Runs the scenario. Bad input -> InputError, and so is a scenario that no node count can make fit
// (refuse_if_cannot_fit's rule, checked before its cluster, lowering or network is built; with the
// context's refuse_unfit_early off it is simulated and reported as not fitting). A scenario that
// more nodes could fit is simulated and its result says it does not fit (memory.fits false).
// trace_path: if non-empty, writes a Chrome trace of the step there. The context's caches serve
// repeated calls (a sweep's thread passes its own); without one, a fresh context serves this call
// only.
StepResult simulate(const Scenario& scenario, SimContext& context,
                    const std::string& trace_path = "");
StepResult simulate(const Scenario& scenario, const std::string& trace_path = "");

// Refuses (InputError naming the flag that can fix it), before any topology or network is built, a
// scenario that no node count can make fit: the parts of its memory estimate that no lowering
// changes (activations, hpZ's secondary copy, FSDP's unsharded units, the reserve, and the model
// states ZeRO does not shard over every GPU), on as many GPUs as --nodes could give, exceed the
// GPU. simulate() makes the same check; this one stops there (the planner screens its candidates
// with it, and `zerosim simulate` runs it first).
void refuse_if_cannot_fit(const Scenario& scenario, SimContext& context);

// refuse_if_cannot_fit's refusal, returned instead of thrown, with the bytes per GPU that no node
// count reduces; nullopt when some node count may fit the scenario. Other bad input throws.
struct UnfitRefusal {
  double need_bytes;
  InputError error;
};
std::optional<UnfitRefusal> unfit_refusal(const Scenario& scenario, SimContext& context);

}  // namespace zerosim
