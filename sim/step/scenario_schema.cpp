#include "sim/step/scenario_schema.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>

#include "sim/core/closest_match.hpp"
#include "sim/core/error.hpp"
#include "sim/core/utf8.hpp"
#include "sim/step/micro_batch.hpp"
#include "sim/strategy/deepspeed_version.hpp"
#include "sim/workload/hf_config.hpp"

namespace zerosim {

namespace {

constexpr double kCountMax = 1e9;  // counts without a tighter physical bound
// qgZ's pipeline: each chunk is lowered as its own ops, and past a few chunks more only add kernel
// and collective launch latency (the paper pipelines a handful).
constexpr double kQgzChunksMax = 256;

// --fsdp-reshard-after-forward: true, false or an integer of at least 2 (a group size).
std::string reshard_after_forward_rule(const std::string& v) {
  if (v == "true" || v == "false") return "";
  long long n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec == std::errc() && end == v.data() + v.size() && n >= 2 && n <= (1 << 20)) return "";
  return fmt::format("must be true, false or a group size of at least 2, not '{}'", printable(v));
}

// The cluster, model and batch rows. Outer axes describe the experiment group (cluster, model,
// batch); the network and the strategy vary fastest so that one group's bandwidth/strategy grid
// is contiguous in a sweep's output.
std::vector<ScenarioParam> cluster_and_batch_rows() {
  using S = Scenario;
  const std::vector<std::string> none, fabrics = {"rail", "fat-tree"};
  return {
      {"--cluster", "cluster", &S::cluster, 0, 0, none,
       "cluster preset (topologies/<name>.json, e.g. dgx-h100) or topology file", "", true},
      {"--nodes", "nodes", &S::nodes, 1, 1 << 20, none,
       "number of server nodes (builder presets only); required with a preset of one node type "
       "(dgx-h100, dgx2-v100, ...)",
       "the preset's"},
      {"--fabric", "fabric", &S::fabric, 0, 0, fabrics,
       "network fabric, rail-optimized or a fat-tree", "the preset's"},
      {"--oversubscription", "oversubscription", &S::oversubscription, 1, 1e6, none,
       "leaf downlink:uplink bandwidth ratio (builder presets only)", "the preset's"},
      {"--model", "model", &S::model, 0, 0, none,
       "workload preset, workload file or Hugging Face config.json", "", true},
      {"--seq-len", "seq_len", &S::seq_len, 1, 1 << 24, none, "sequence length",
       fmt::format("a preset's seq; for a Hugging Face config its pretraining length "
                   "(rope_scaling.original_max_position_embeddings) or {}, at most its "
                   "max_position_embeddings",
                   kHfDefaultSeqLen)},
      {"--micro-batch", "micro_batch", &S::micro_batch, 1, kCountMax, none,
       "sequences per GPU per micro-step (or --tokens-per-gpu)",
       fmt::format("the whole sequences in {} tokens, at least one", kDefaultTokensPerGpu)},
      {"--tokens-per-gpu", "tokens_per_gpu", &S::tokens_per_gpu, 1, kCountMax, none,
       "tokens per GPU per micro-step, a whole number of sequences (or --micro-batch)",
       "--micro-batch's default"},
      {"--grad-accum", "grad_accum", &S::grad_accum, 1, kCountMax, none,
       "gradient accumulation steps"},
      {"--nics-per-node", "nics_per_node", &S::nics_per_node, 1, 64, none,
       "network adapters per node, 1..the node type's maximum (builder presets only)",
       "the preset's"},
      {"--nic-gbps", "nic_gbps", &S::nic_gbps, 1e-3, 1e6, none,
       "line rate per NIC in Gbit/s (builder presets only)", "the preset's"},
  };
}

// The strategy, its knobs, the profile, the tier and the compute switches.
std::vector<ScenarioParam> strategy_rows() {
  using S = Scenario;
  const std::vector<std::string> none,
      tiers = choice_names<NetworkTier>(), booleans = {"true", "false"},
      attention = choice_names<AttentionChoice>(), prefetch = choice_names<BackwardPrefetch>(),
      dtypes = choice_names<FsdpDtype>();
  const auto fsdp = [](const Strategy& s) { return s.family() == StrategyFamily::Fsdp; };
  const auto fsdp1 = [](const Strategy& s) {
    return s.family() == StrategyFamily::Fsdp && s.fsdp.sharding != FsdpSharding::FullyShard;
  };
  const auto fsdp2 = [](const Strategy& s) { return s.fsdp.sharding == FsdpSharding::FullyShard; };
  return {
      {"--strategy", "strategy", &S::strategy, 0, 0, none,
       "zero1 | zero2 | hsdp | zero3 | zeropp | zero3+qwz | zero3+hpz | zero3+qgz | zero3+qwz+hpz "
       "| ... | fsdp (FULL_SHARD) | fsdp-grad-op (SHARD_GRAD_OP) | fsdp-hybrid (HYBRID_SHARD)"},
      {"--deepspeed", "deepspeed", &S::deepspeed, 0, 0, none,
       "DeepSpeed config JSON (replaces --strategy; its micro-batch and accumulation replace the "
       "flags)",
       "none"},
      {"--fsdp-config", "fsdp_config", &S::fsdp_config, 0, 0, none,
       "FSDP config file (YAML): an LLM Foundry / Composer YAML (its fsdp_config) or a Hugging "
       "Face "
       "Accelerate config (sets the strategy, the --fsdp-* knobs and activation checkpointing; a "
       "flag that contradicts it is an error)",
       "none"},
      {"--deepspeed-version", "deepspeed_version", &S::deepspeed_version, 0, 0, none,
       std::string("DeepSpeed release whose stage-3 / ZeRO++ rules run (hpZ's secondary reads, "
                   "qgZ's fallback): ") +
           kDeepSpeedVersionForms,
       "", false, nullptr, deepspeed_version_rule, "MAJOR.MINOR[.PATCH]"},
      {"--hpz-size", "hpz_partition", &S::hpz_partition, 1, kCountMax, none,
       "hpZ secondary partition size k", "GPUs per node", false,
       [](const Strategy& s) { return s.hpz; }},
      {"--hsdp-size", "hsdp_size", &S::hsdp_size, 1, kCountMax, none,
       "shard group size S of hsdp and fsdp-hybrid (sharded within S consecutive ranks, "
       "replicated across groups); for fsdp2, the shard dimension of a 2-D mesh (replicate, "
       "shard)",
       "GPUs per node (fsdp2: a 1-D mesh)", false,
       [](const Strategy& s) {
         return s.hybrid_by_name() || s.fsdp.sharding == FsdpSharding::FullyShard;
       }},
      {"--qwz-bits", "quant_bits_weights", &S::quant_bits_weights, 1, kCountMax, none,
       "qwZ weight quantization bits (8 or 4)", "", false, [](const Strategy& s) { return s.qwz; }},
      {"--qgz-bits", "quant_bits_grads", &S::quant_bits_grads, 1, kCountMax, none,
       "qgZ gradient quantization bits (the kernels do 4)", "", false,
       [](const Strategy& s) { return s.qgz; }},
      {"--qgz-chunks", "qgz_chunks", &S::qgz_chunks, 1, kQgzChunksMax, none,
       "pipeline qgZ's two hops over this many chunks (1 = off)", "", false,
       [](const Strategy& s) { return s.qgz; }},
      {"--fsdp-backward-prefetch", "fsdp_backward_prefetch", &S::fsdp_backward_prefetch, 0, 0,
       prefetch, "FSDP backward_prefetch: BACKWARD_PRE, BACKWARD_POST or none", "", false, fsdp1},
      {"--fsdp-forward-prefetch", "fsdp_forward_prefetch", &S::fsdp_forward_prefetch, 0, 0,
       booleans, "FSDP forward_prefetch", "", false, fsdp1},
      {"--fsdp-limit-all-gathers", "fsdp_limit_all_gathers", &S::fsdp_limit_all_gathers, 0, 0,
       booleans, "FSDP limit_all_gathers (the rate limiter: two all-gathers in flight)", "", false,
       fsdp1},
      {"--fsdp-reshard-after-forward", "fsdp_reshard_after_forward", &S::fsdp_reshard_after_forward,
       0, 0, none,
       "FSDP2 reshard_after_forward of the blocks: true (gather again in backward), false (keep "
       "them gathered) or N (reshard to N ranks: the backward's all-gather within groups of N)",
       "", false, fsdp2, reshard_after_forward_rule, "true|false|N"},
      {"--fsdp-param-dtype", "fsdp_param_dtype", &S::fsdp_param_dtype, 0, 0, dtypes,
       "FSDP MixedPrecision param_dtype (the all-gathers' dtype; auto: the training dtype)", "",
       false, fsdp},
      {"--fsdp-reduce-dtype", "fsdp_reduce_dtype", &S::fsdp_reduce_dtype, 0, 0, dtypes,
       "FSDP MixedPrecision reduce_dtype (the gradient reductions' dtype; auto: param_dtype)", "",
       false, fsdp},
      {"--profile", "profile", &S::profile, 0, 0, none, "cost profile name or file",
       "matches the GPU"},
      {"--tier", "tier", &S::tier, 0, 0, tiers, "network model"},
      {"--activation-checkpointing", "activation_checkpointing", &S::activation_checkpointing, 0, 0,
       booleans, "activation checkpointing"},
      {"--attention", "attention", &S::attention, 0, 0, attention,
       "attention implementation (auto: FlashAttention on Ampere and later GPUs for the model "
       "families that use it; eager for the GPT presets and on V100s)"},
      {"--sm-share", "sm_share", &S::sm_share, 0, 0, booleans,
       "SM sharing: while an NCCL collective runs, its kernel holds one SM per channel and the "
       "GPU's compute runs on the SMs left"},
  };
}

std::vector<ScenarioParam> make_table() {
  std::vector<ScenarioParam> table = cluster_and_batch_rows();
  std::vector<ScenarioParam> rest = strategy_rows();
  table.insert(table.end(), std::make_move_iterator(rest.begin()),
               std::make_move_iterator(rest.end()));
  return table;
}

// "a or b", "a, b or c".
std::string one_of(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return out;
}

// The rule of an integer value in [min, max], or ""; the value in `out`.
std::string int_rule(double min, double max, const std::string& value, long long& out) {
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec == std::errc::invalid_argument || p != value.data() + value.size())
    return fmt::format("'{}' is not an integer", printable(value));
  const bool huge = ec == std::errc::result_out_of_range;
  if ((huge && value[0] == '-') || (!huge && out < min))
    return fmt::format("must be at least {}, not '{}'", static_cast<long long>(min),
                       printable(value));
  if (huge || out > max)
    return fmt::format("must be at most {}, not '{}'", static_cast<long long>(max),
                       printable(value));
  return "";
}

std::string real_rule(double min, double max, const std::string& value, double& out) {
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if ((ec != std::errc() && ec != std::errc::result_out_of_range) ||
      p != value.data() + value.size())
    return fmt::format("'{}' is not a number", printable(value));
  if (ec == std::errc::result_out_of_range || !std::isfinite(out))
    return fmt::format("must be a finite number, not '{}'", printable(value));
  if (out < min || out > max)
    return fmt::format("must be between {:g} and {:g}, not '{}'", min, max, printable(value));
  return "";
}

// Checks `value` against p's rule; when valid and `scenario` is given, sets the member.
std::string parse(const ScenarioParam& p, const std::string& value, Scenario* scenario) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_reference_t<decltype(std::declval<Scenario&>().*member)>;
        T parsed{};
        std::string rule;
        if constexpr (std::is_same_v<T, int>) {
          long long v = 0;
          rule = int_rule(p.min, p.max, value, v);
          parsed = static_cast<int>(v);
        } else if constexpr (std::is_same_v<T, double>) {
          rule = real_rule(p.min, p.max, value, parsed);
        } else if constexpr (std::is_enum_v<T>) {
          if (const std::optional<T> v = parse_choice<T>(value))
            parsed = *v;
          else
            rule = fmt::format("'{}' is not {}{}", printable(value), one_of(p.choices),
                               did_you_mean(value, p.choices));
        } else {
          if (!p.choices.empty() &&
              std::find(p.choices.begin(), p.choices.end(), value) == p.choices.end())
            rule = fmt::format("'{}' is not {}{}", printable(value), one_of(p.choices),
                               did_you_mean(value, p.choices));
          if (p.text_rule) rule = p.text_rule(value);
          if constexpr (std::is_same_v<T, bool>)
            parsed = value == "true";
          else
            parsed = value;
        }
        if (rule.empty() && scenario) scenario->*member = std::move(parsed);
        return rule;
      },
      p.member);
}

}  // namespace

const std::vector<ScenarioParam>& scenario_params() {
  static const std::vector<ScenarioParam> table = make_table();
  return table;
}

json scenario_param_json(const ScenarioParam& p, const Scenario& s) {
  return std::visit(
      [&](auto member) {
        const auto& v = s.*member;
        if constexpr (std::is_enum_v<std::remove_cvref_t<decltype(v)>>)
          return json(std::string(choice_name(v)));
        else
          return json(v);
      },
      p.member);
}

const ScenarioParam* find_scenario_param(std::string_view flag) {
  for (const auto& p : scenario_params())
    if (p.flag == flag) return &p;
  return nullptr;
}

bool scenario_param_applies(const ScenarioParam& p, const Strategy& strategy) {
  return p.applies == nullptr || p.applies(strategy);
}

std::string scenario_param_rule(const ScenarioParam& p, const std::string& value) {
  return parse(p, value, nullptr);
}

void apply_scenario_param(Scenario& scenario, const ScenarioParam& p, const std::string& value) {
  require_utf8(value, p.flag);
  std::string rule = parse(p, value, &scenario);
  if (!rule.empty()) throw flag_error(p.flag, rule);
}

std::string finite_range_rule(double min, double max, const std::string& value) {
  double v = 0;
  return real_rule(min, max, value, v);
}

int tier_max_gpus(NetworkTier tier) {
  constexpr int kFlowMaxGpus = 1 << 20, kAnalyticMaxGpus = 1 << 20;
  return tier == NetworkTier::Flow ? kFlowMaxGpus : kAnalyticMaxGpus;
}

int unfolded_max_gpus() { return 131072; }

int plan_max_gpus() { return 131072; }

std::string int_range_rule(double min, double max, const std::string& value) {
  long long v = 0;
  return int_rule(min, max, value, v);
}

ParamKind scenario_param_kind(const ScenarioParam& p) {
  return std::visit(
      [](auto member) {
        using T = std::remove_reference_t<decltype(std::declval<Scenario&>().*member)>;
        if constexpr (std::is_same_v<T, int>) return ParamKind::Int;
        if constexpr (std::is_same_v<T, double>) return ParamKind::Float;
        if constexpr (std::is_same_v<T, bool>) return ParamKind::Bool;
        return ParamKind::Text;
      },
      p.member);
}

std::string scenario_param_type(const ScenarioParam& p) {
  static const char* const kNames[] = {"INT", "FLOAT", "TEXT", "BOOL"};
  return kNames[static_cast<int>(scenario_param_kind(p))];
}

std::string scenario_param_range(const ScenarioParam& p) {
  if (!p.choices.empty()) return fmt::format("{{{}}}", fmt::join(p.choices, ","));
  if (!p.form.empty()) return p.form;
  if (std::holds_alternative<int Scenario::*>(p.member))
    return fmt::format("INT in [{} - {}]", static_cast<long long>(p.min),
                       static_cast<long long>(p.max));
  if (std::holds_alternative<double Scenario::*>(p.member))
    return fmt::format("FINITE in [{:g} - {:g}]", p.min, p.max);
  return "";
}

std::string scenario_param_help(const ScenarioParam& p, bool required) {
  std::string out = p.help;
  if (!p.choices.empty()) out += ": " + fmt::format("{}", fmt::join(p.choices, " | "));
  if (required) return out;
  std::string def = p.default_note;
  if (def.empty()) {
    const json v = scenario_param_json(p, Scenario{});
    def = v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out + " (default: " + def + ")";
}

json scenario_to_json(const Scenario& scenario) {
  json out = json::object();
  for (const auto& p : scenario_params()) out[p.key] = scenario_param_json(p, scenario);
  return out;
}

}  // namespace zerosim
