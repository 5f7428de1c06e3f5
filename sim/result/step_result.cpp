// StepResult <-> the JSON document of docs/result-schema.json. Each part has one writer and one
// strict reader side by side, so a key added to one shows up missing in the other's round trip
// test (tests/result/test_step_result.cpp).
#include "sim/result/step_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <iterator>
#include <utility>

#include "sim/core/finite_json.hpp"

namespace zerosim {

double ComputeTerms::total() const {
  double t = gemm_s + attention_s + launch_s;
  for (const double m : memory_s) t += m;
  return t;
}

ComputeTerms& ComputeTerms::operator+=(const ComputeTerms& o) {
  gemm_s += o.gemm_s;
  attention_s += o.attention_s;
  launch_s += o.launch_s;
  for (std::size_t i = 0; i < memory_s.size(); ++i) memory_s[i] += o.memory_s[i];
  return *this;
}

ComputeTerms ComputeTerms::scaled(double f) const {
  ComputeTerms t = *this;
  t.gemm_s *= f;
  t.attention_s *= f;
  t.launch_s *= f;
  for (double& m : t.memory_s) m *= f;
  return t;
}

namespace {

// The writers below describe each object to a JsonTextWriter or a JsonTreeObject (json_text.hpp):
// members in increasing key order, the order the text has. `parts` gives the descriptions other
// modules write (model, strategy, memory estimate): their tree, or their text.

std::uint64_t get_count(const JsonReader& r) {
  return static_cast<std::uint64_t>(r.get_int_at_least(0));
}

ModelShape read_model(const JsonReader& r) {
  r.require_object({"name",       "family",        "layers",          "hidden",    "heads",
                    "kv_heads",   "ffn",           "vocab",           "seq",       "gated_ffn",
                    "bias",       "norm",          "tied_embeddings", "positions", "dropout",
                    "seq_source", "position_rows", "flash_attention", "arch",      "source"});
  ModelShape m;
  m.name = r.at("name").get_string();
  m.family = r.at("family").get_string();
  m.layers = r.at("layers").get_int32_at_least(1);
  m.hidden = r.at("hidden").get_int_at_least(1);
  m.heads = r.at("heads").get_int32_at_least(1);
  m.kv_heads = r.at("kv_heads").get_int32_at_least(1);
  m.ffn = r.at("ffn").get_int_at_least(1);
  m.vocab = r.at("vocab").get_int_at_least(1);
  m.seq = r.at("seq").get_int32_at_least(1);
  if (r.has("seq_source")) m.seq_source = r.at("seq_source").get_string();
  if (r.has("position_rows")) m.position_rows = r.at("position_rows").get_int32_at_least(1);
  m.gated_ffn = r.at("gated_ffn").get_bool();
  m.bias = r.at("bias").get_bool();
  m.layernorm = read_layernorm(r.at("norm"));
  m.tied_embeddings = r.at("tied_embeddings").get_bool();
  m.learned_positions = read_learned_positions(r.at("positions"));
  m.dropout = r.at("dropout").get_bool();
  m.flash_attention = r.at("flash_attention").get_bool();
  if (r.has("arch")) m.arch = read_arch(r.at("arch"));
  m.source = r.at("source").get_string();
  return m;
}

// FsdpOptions (to_json(Strategy)'s "fsdp"; sharding as the strategy's name says).
// FSDP2's (fsdp2): reshard_after_forward true, false or its group size instead of FSDP1's knobs.
void read_fsdp2(const JsonReader& f, FsdpOptions& o) {
  f.require_object({"sharding", "reshard_after_forward", "param_bytes"});
  const JsonReader r = f.at("reshard_after_forward");
  if (r.value().is_boolean())
    o.reshard_after_forward = r.get_bool() ? FsdpOptions::kReshardToShards : 0;
  else
    o.reshard_after_forward = r.get_int32_at_least(2);
  o.param_bytes = f.at("param_bytes").get_int32_at_least(1);
}

void read_fsdp(const JsonReader& f, FsdpOptions& o) {
  if (f.has("sharding") && f.at("sharding").get_string() != to_string(o.sharding))
    f.at("sharding")
        .fail(fmt::format("must be {}, as the strategy's name says", to_string(o.sharding)));
  if (o.sharding == FsdpSharding::FullyShard) {
    read_fsdp2(f, o);
    return;
  }
  f.require_object(
      {"sharding", "backward_prefetch", "forward_prefetch", "limit_all_gathers", "param_bytes"});
  const std::string prefetch = f.at("backward_prefetch").get_string();
  bool known = false;
  for (const BackwardPrefetch p :
       {BackwardPrefetch::Pre, BackwardPrefetch::Post, BackwardPrefetch::None})
    if (prefetch == to_string(p)) {
      o.backward_prefetch = p;
      known = true;
    }
  if (!known) f.at("backward_prefetch").fail("must be BACKWARD_PRE, BACKWARD_POST or NONE");
  o.forward_prefetch = f.at("forward_prefetch").get_bool();
  o.limit_all_gathers = f.at("limit_all_gathers").get_bool();
  o.param_bytes = f.at("param_bytes").get_int32_at_least(1);
}

// The knobs of a strategy's JSON echo: ZeRO++'s widths, DeepSpeed's buckets and release, the
// dtype, the source and the offload devices.
void read_strategy_knobs(const JsonReader& r, Strategy& s) {
  s.hpz_size = r.at("hpz_size").get_int32_at_least(0);
  s.weight_bits = r.at("weight_bits").get_int32_at_least(1);
  s.grad_bits = r.at("grad_bits").get_int32_at_least(1);
  s.quant_block = r.at("quant_block_elems").get_int_at_least(1);
  s.qgz_chunks = r.at("qgz_chunks").get_int32_at_least(1);
  s.overlap_comm = r.at("overlap_comm").get_bool();
  s.reduce_bucket_elems = r.at("reduce_bucket_elems").get_int_at_least(0);
  s.prefetch_bucket_elems = r.at("prefetch_bucket_elems").get_int_at_least(0);
  s.max_live_params = r.at("max_live_params").get_int_at_least(0);
  // Results written before the reuse distance was modelled ran with DeepSpeed's default.
  if (r.has("max_reuse_distance"))
    s.max_reuse_distance = r.at("max_reuse_distance").get_int_at_least(0);
  s.grad_comm_bytes = r.at("grad_comm_bytes").get_int32_at_least(1);
  // Results written before the release was modelled ran 0.10.0's rules. The rules are derived.
  s.deepspeed_version = DeepSpeedVersion{0, 10, 0, true};
  if (r.has("deepspeed_version")) {
    const std::string v = r.at("deepspeed_version").get_string();
    if (const std::string rule = deepspeed_version_rule(v); !rule.empty())
      r.at("deepspeed_version").fail(rule);
    s.deepspeed_version = parse_deepspeed_version(v);
  }
  s.dtype = r.at("dtype").get_string();
  s.source = r.at("source").get_string();
  for (const bool param : {false, true}) {
    const char* key = param ? "offload_param" : "offload_optimizer";
    if (!r.has(key)) continue;
    const std::string d = r.at(key).get_string();
    if (d != "cpu" && d != "nvme") r.at(key).fail("must be cpu or nvme (absent: none)");
    (param ? s.offload_param : s.offload_optimizer) =
        d == "cpu" ? OffloadDevice::Cpu : OffloadDevice::Nvme;
  }
}

Strategy read_strategy(const JsonReader& r) {
  r.require_object({"name",
                    "qwz",
                    "hpz",
                    "qgz",
                    "hpz_size",
                    "weight_bits",
                    "grad_bits",
                    "quant_block_elems",
                    "qgz_chunks",
                    "overlap_comm",
                    "reduce_bucket_elems",
                    "prefetch_bucket_elems",
                    "max_live_params",
                    "max_reuse_distance",
                    "grad_comm_bytes",
                    "deepspeed_version",
                    "deepspeed_rules",
                    "dtype",
                    "source",
                    "shard_size",
                    "offload_optimizer",
                    "offload_param",
                    "fsdp"});
  const auto id = find_strategy_id(r.at("name").get_string());
  if (!id)
    r.at("name").fail(
        "is no strategy of the vocabulary (zero1, zero2, hsdp, zero3[+qwz][+hpz][+qgz], zeropp, "
        "fsdp, fsdp-grad-op, fsdp-hybrid)");
  Strategy s = strategy_of(*id);
  s.qwz = r.at("qwz").get_bool();
  s.hpz = r.at("hpz").get_bool();
  s.qgz = r.at("qgz").get_bool();
  // The stage, HSDP and FSDP are named, not flagged (a hybrid one with its shard_size).
  const std::string name = r.at("name").get_string();
  // fsdp2 has one on a 2-D mesh only.
  const bool meshable = s.fsdp.sharding == FsdpSharding::FullyShard;
  if (s.hybrid_by_name() || (meshable && r.has("shard_size"))) {
    if (!r.has("shard_size"))
      r.fail(fmt::format("missing required key 'shard_size' (strategy {})", name));
    s.shard_size = r.at("shard_size").get_int32_at_least(1);
  } else if (r.has("shard_size")) {
    r.at("shard_size").fail("only the hsdp, fsdp-hybrid and fsdp2 strategies have a shard size");
  }
  if (name != s.name())
    r.at("name").fail(fmt::format("must be '{}', the name of the qwz/hpz/qgz flags", s.name()));
  if (s.family() == StrategyFamily::Fsdp) {
    if (!r.has("fsdp")) r.fail(fmt::format("missing required key 'fsdp' (strategy {})", name));
    read_fsdp(r.at("fsdp"), s.fsdp);
  } else if (r.has("fsdp")) {
    r.at("fsdp").fail("only the fsdp strategies have FSDP settings");
  }
  read_strategy_knobs(r, s);
  return s;
}

template <class Object, class Parts>
void write_scenario(Object& j, const ScenarioEcho& s, Parts& parts) {
  j.put("activation_checkpointing", s.activation_checkpointing);
  j.put("active_params", s.active_params);
  j.put("attention", s.attention);
  j.put("cluster", s.cluster);
  j.put("fabric", s.fabric);
  j.put("gpu_model", s.gpu_model);
  j.put("gpus_per_node", s.gpus_per_node);
  j.put("grad_accum", s.grad_accum);
  j.put("micro_batch_sequences", s.micro_batch_sequences);
  j.put("model", parts.of(s.model));
  j.put("nic_gbps", s.nic_gbps);
  j.put("nics_per_node", s.nics_per_node);
  j.put("node_type", s.node_type);
  j.put("nodes", s.nodes);
  j.put("oversubscription", s.oversubscription);
  j.put("params", s.params);
  j.put("prefetch_depth", s.prefetch_depth);
  j.put_object("profile", [&](auto& profile) {
    profile.put("name", s.profile_name);
    profile.put("status", s.profile_status);
  });
  j.put("seq_len", s.seq_len);
  j.put("seq_len_source", s.seq_len_source);
  j.put("sm_share", s.sm_share);
  j.put("strategy", parts.of(s.strategy));
  j.put("tier", s.tier);
  j.put("tokens_per_gpu", s.tokens_per_gpu);
  j.put("world_size", s.world_size);
}

ScenarioEcho read_scenario(const JsonReader& r) {
  r.require_object({"cluster",
                    "node_type",
                    "gpu_model",
                    "nodes",
                    "gpus_per_node",
                    "world_size",
                    "nics_per_node",
                    "nic_gbps",
                    "fabric",
                    "oversubscription",
                    "model",
                    "params",
                    "active_params",
                    "strategy",
                    "tokens_per_gpu",
                    "seq_len",
                    "seq_len_source",
                    "micro_batch_sequences",
                    "grad_accum",
                    "activation_checkpointing",
                    "attention",
                    "sm_share",
                    "prefetch_depth",
                    "profile",
                    "tier"});
  ScenarioEcho s;
  s.cluster = r.at("cluster").get_string();
  s.node_type = r.at("node_type").get_string();
  s.gpu_model = r.at("gpu_model").get_string();
  s.nodes = r.at("nodes").get_int32_at_least(1);
  s.gpus_per_node = r.at("gpus_per_node").get_int32_at_least(1);
  s.world_size = r.at("world_size").get_int32_at_least(1);
  s.nics_per_node = r.at("nics_per_node").get_int32_at_least(0);
  s.nic_gbps = r.at("nic_gbps").get_nonnegative();
  s.fabric = r.at("fabric").get_string();
  s.oversubscription = r.at("oversubscription").get_positive();
  s.model = read_model(r.at("model"));
  s.params = r.at("params").get_int_at_least(0);
  s.active_params = r.at("active_params").get_int_at_least(0);
  if (s.active_params > s.params)
    r.at("active_params").fail(fmt::format("must be at most params ({})", s.params));
  s.strategy = read_strategy(r.at("strategy"));
  s.tokens_per_gpu = r.at("tokens_per_gpu").get_int_at_least(1);
  s.seq_len = r.at("seq_len").get_int32_at_least(1);
  s.seq_len_source = r.at("seq_len_source").get_string();
  s.micro_batch_sequences = r.at("micro_batch_sequences").get_int_at_least(1);
  s.grad_accum = r.at("grad_accum").get_int32_at_least(1);
  s.activation_checkpointing = r.at("activation_checkpointing").get_bool();
  s.attention = r.at("attention").get_string();
  if (s.attention != "flash" && s.attention != "eager")
    r.at("attention").fail("must be flash or eager");
  s.sm_share = r.at("sm_share").get_bool();
  s.prefetch_depth = r.at("prefetch_depth").get_int32_at_least(0);
  const JsonReader p = r.at("profile");
  p.require_object({"name", "status"});
  s.profile_name = p.at("name").get_string();
  s.profile_status = p.at("status").get_string();
  s.tier = r.at("tier").get_string();
  return s;
}

// The compute_kernels_s object's keys (gemm, attention, each MemoryKernel's name, launch) in key
// order, each with its term: kGemm, kAttention, kLaunch or a MemoryKernel.
constexpr int kGemm = -1, kAttention = -2, kLaunch = -3;
const std::vector<std::pair<std::string, int>>& compute_kernel_keys() {
  static const std::vector<std::pair<std::string, int>> keys = [] {
    std::vector<std::pair<std::string, int>> k = {
        {"gemm", kGemm}, {"attention", kAttention}, {"launch", kLaunch}};
    for (int m = 0; m < kMemoryKernelCount; ++m)
      k.emplace_back(to_string(static_cast<MemoryKernel>(m)), m);
    std::sort(k.begin(), k.end());
    return k;
  }();
  return keys;
}

template <class Object>
void write_compute_kernels(Object& j, const ComputeTerms& t) {
  for (const auto& [key, term] : compute_kernel_keys())
    j.put(key, term == kGemm        ? t.gemm_s
               : term == kAttention ? t.attention_s
               : term == kLaunch    ? t.launch_s
                                    : t.memory_s[static_cast<std::size_t>(term)]);
}

ComputeTerms read_compute_kernels(const JsonReader& r) {
  r.require_object({"gemm", "attention", "norm", "activation", "residual", "bias", "rotary",
                    "dropout", "loss", "embedding", "padding", "launch"});
  ComputeTerms t;
  t.gemm_s = r.at("gemm").get_nonnegative();
  t.attention_s = r.at("attention").get_nonnegative();
  t.launch_s = r.at("launch").get_nonnegative();
  for (int k = 0; k < kMemoryKernelCount; ++k)
    t.memory_s[static_cast<std::size_t>(k)] =
        r.at(to_string(static_cast<MemoryKernel>(k))).get_nonnegative();
  return t;
}

template <class Object>
void write_breakdown(Object& j, const StepTimeBreakdown& b) {
  const bool offloads = b.offloads();
  j.put_object("compute_kernels_s",
               [&](auto& kernels) { write_compute_kernels(kernels, b.compute_kernels); });
  j.put("compute_s", b.compute_s);
  j.put_object("exposed_comm_s", [&](auto& exposed) {
    exposed.put("all_gather", b.exposed_comm.all_gather_s);
    exposed.put("all_reduce", b.exposed_comm.all_reduce_s);
    exposed.put("all_to_all", b.exposed_comm.all_to_all_s);
    exposed.put("reduce_scatter", b.exposed_comm.reduce_scatter_s);
    exposed.put("total", b.exposed_comm.total_s);
  });
  j.put("exposed_kernels_s", b.exposed_kernels_s);
  if (offloads) {
    j.put("exposed_offload_s", b.exposed_offload_s);
    j.put("host_optimizer_s", b.host_optimizer_s);
  }
  j.put("idle_s", b.idle_s);
  if (offloads) {
    j.put("nvme_io_s", b.nvme_io_s);
    j.put("offload_copy_s", b.offload_copy_s);
  }
  j.put("optimizer_s", b.optimizer_s);
  j.put("other_kernels_s", b.other_kernels_s);
  j.put("param_fetch_s", b.param_fetch_s);
  j.put("quant_kernels_s", b.quant_kernels_s);
  j.put("recompute_s", b.recompute_s);
}

StepTimeBreakdown read_breakdown(const JsonReader& r) {
  r.require_object({"compute_s", "recompute_s", "optimizer_s", "param_fetch_s", "quant_kernels_s",
                    "other_kernels_s", "exposed_comm_s", "exposed_kernels_s", "idle_s",
                    "compute_kernels_s", "offload_copy_s", "nvme_io_s", "host_optimizer_s",
                    "exposed_offload_s"});
  StepTimeBreakdown b;
  const char* offload[] = {"offload_copy_s", "nvme_io_s", "host_optimizer_s", "exposed_offload_s"};
  double* to[] = {&b.offload_copy_s, &b.nvme_io_s, &b.host_optimizer_s, &b.exposed_offload_s};
  for (std::size_t i = 0; i < 4; ++i)
    if (r.has(offload[i])) *to[i] = r.at(offload[i]).get_nonnegative();
  b.compute_s = r.at("compute_s").get_nonnegative();
  b.recompute_s = r.at("recompute_s").get_nonnegative();
  b.optimizer_s = r.at("optimizer_s").get_nonnegative();
  b.param_fetch_s = r.at("param_fetch_s").get_nonnegative();
  b.quant_kernels_s = r.at("quant_kernels_s").get_nonnegative();
  b.other_kernels_s = r.at("other_kernels_s").get_nonnegative();
  const JsonReader e = r.at("exposed_comm_s");
  e.require_object({"all_gather", "reduce_scatter", "all_to_all", "all_reduce", "total"});
  b.exposed_comm.all_gather_s = e.at("all_gather").get_nonnegative();
  b.exposed_comm.reduce_scatter_s = e.at("reduce_scatter").get_nonnegative();
  b.exposed_comm.all_to_all_s = e.at("all_to_all").get_nonnegative();
  b.exposed_comm.all_reduce_s = e.at("all_reduce").get_nonnegative();
  b.exposed_comm.total_s = e.at("total").get_nonnegative();
  b.exposed_kernels_s = r.at("exposed_kernels_s").get_nonnegative();
  b.idle_s = r.at("idle_s").get_nonnegative();
  b.compute_kernels = read_compute_kernels(r.at("compute_kernels_s"));
  return b;
}

template <class Object>
void write_totals(Object& j, const std::map<std::string, CommTotals>& totals) {
  for (const auto& entry : totals) {
    const CommTotals& t = entry.second;  // a structured binding: not capturable under clang 14
    j.put_object(entry.first, [&](auto& e) {
      e.put("busy_s", t.busy_s);
      e.put("count", t.count);
      e.put("inter_node_bytes", t.inter_node_bytes);
      e.put("intra_node_bytes", t.intra_node_bytes);
    });
  }
}

std::map<std::string, CommTotals> read_totals(const JsonReader& r) {
  if (!r.value().is_object()) r.fail("must be an object");
  std::map<std::string, CommTotals> totals;
  for (const auto& item : r.value().items()) {
    const JsonReader e = r.at(item.key());
    e.require_object({"inter_node_bytes", "intra_node_bytes", "count", "busy_s"});
    CommTotals& t = totals[item.key()];
    t.inter_node_bytes = e.at("inter_node_bytes").get_nonnegative();
    t.intra_node_bytes = e.at("intra_node_bytes").get_nonnegative();
    t.count = get_count(e.at("count"));
    t.busy_s = e.at("busy_s").get_nonnegative();
  }
  return totals;
}

template <class Object>
void write_comm(Object& j, const CommResult& c) {
  j.put_object("by_collective", [&](auto& o) { write_totals(o, c.by_collective); });
  j.put_object("by_phase", [&](auto& o) { write_totals(o, c.by_phase); });
  j.put("collectives", c.collectives);
  j.put("flows", c.flows);
  j.put("inter_node_bytes", c.inter_node_bytes);
  j.put("intra_node_bytes", c.intra_node_bytes);
}

CommResult read_comm(const JsonReader& r) {
  r.require_object({"inter_node_bytes", "intra_node_bytes", "by_collective", "by_phase",
                    "collectives", "flows"});
  CommResult c;
  c.inter_node_bytes = r.at("inter_node_bytes").get_nonnegative();
  c.intra_node_bytes = r.at("intra_node_bytes").get_nonnegative();
  c.by_collective = read_totals(r.at("by_collective"));
  c.by_phase = read_totals(r.at("by_phase"));
  c.collectives = get_count(r.at("collectives"));
  c.flows = get_count(r.at("flows"));
  return c;
}

MemoryEstimate read_memory(const JsonReader& r) {
  r.require_object({"peak_bytes_per_gpu", "capacity_bytes", "fits", "components"});
  MemoryEstimate m;
  m.peak_bytes = r.at("peak_bytes_per_gpu").get_nonnegative();
  m.capacity_bytes = r.at("capacity_bytes").get_nonnegative();
  m.fits = r.at("fits").get_bool();
  const JsonReader comps = r.at("components");
  if (!comps.value().is_object()) comps.fail("must be an object");
  for (const auto& item : comps.value().items())
    m.components.emplace_back(item.key(), comps.at(item.key()).get_nonnegative());
  return m;
}

constexpr const char* kOffloadKeys[] = {"h2d_bytes_per_gpu",
                                        "d2h_bytes_per_gpu",
                                        "nvme_read_bytes_per_gpu",
                                        "nvme_write_bytes_per_gpu",
                                        "pcie_Bps",
                                        "host_adam_params_per_s",
                                        "nvme_Bps_per_node",
                                        "host_bytes_per_node",
                                        "host_capacity_bytes_per_node",
                                        "nvme_bytes_per_node"};

std::array<double*, 10> offload_fields(OffloadResult& o) {
  return {&o.h2d_bytes_per_gpu,
          &o.d2h_bytes_per_gpu,
          &o.nvme_read_bytes_per_gpu,
          &o.nvme_write_bytes_per_gpu,
          &o.pcie_Bps,
          &o.host_adam_params_per_s,
          &o.nvme_Bps_per_node,
          &o.host_bytes_per_node,
          &o.host_capacity_bytes_per_node,
          &o.nvme_bytes_per_node};
}

template <class Object>
void write_offload(Object& j, OffloadResult o) {
  // kOffloadKeys' indices in key order.
  static const std::vector<std::size_t> order = [] {
    std::vector<std::size_t> k(std::size(kOffloadKeys));
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = i;
    std::sort(k.begin(), k.end(), [](std::size_t a, std::size_t b) {
      return std::string_view(kOffloadKeys[a]) < std::string_view(kOffloadKeys[b]);
    });
    return k;
  }();
  const auto f = offload_fields(o);
  for (const std::size_t i : order) j.put(kOffloadKeys[i], *f[i]);
}

template <class Object, class Parts>
void write_result(Object& j, const StepResult& r, Parts& parts) {
  j.put_object("breakdown", [&](auto& o) { write_breakdown(o, r.breakdown); });
  j.put_object("comm", [&](auto& o) { write_comm(o, r.comm); });
  j.put("counted_flops_per_step", r.counted_flops_per_step);
  j.put("counted_tflops_per_gpu", r.counted_tflops_per_gpu);
  j.put_object("engine", [&](auto& o) { o.put("events", r.engine_events); });
  j.put("hfu", r.hfu);
  j.put("memory", parts.of(r.memory));
  j.put("mfu", r.mfu);
  j.put("mfu_flops_per_step", r.mfu_flops_per_step);
  j.put("model_flops_per_step", r.model_flops_per_step);
  if (r.has_offload) j.put_object("offload", [&](auto& o) { write_offload(o, r.offload); });
  j.put("peak_tflops_per_gpu", r.peak_tflops_per_gpu);
  j.put_object("scenario", [&](auto& o) { write_scenario(o, r.scenario, parts); });
  j.put("schema_version", r.schema_version);
  j.put("step_time_s", r.step_time_s);
  j.put("tflops_per_gpu", r.tflops_per_gpu);
  j.put("tokens_per_s", r.tokens_per_s);
  j.put("warnings", r.warnings);
}

// The tree's parts: the other modules' to_json.
struct TreeParts {
  template <class T>
  json of(const T& v) const {
    return to_json(v);
  }
};

// The last few distinct values of T and their text, dumped once each: a sweep's results repeat a
// handful of models, strategies and memory estimates.
template <class T>
class DumpMemo {
 public:
  template <class Same>
  JsonText text(const T& v, Same same, bool& finite) {
    for (const Entry& e : entries_)
      if (same(e.value, v)) {
        finite = finite && e.finite;
        return {e.text};
      }
    const json j = to_json(v);
    Entry fresh{v, j.dump(), first_non_finite(j).empty()};
    Entry* e = nullptr;
    if (entries_.size() < kSize) {
      e = &entries_.emplace_back(std::move(fresh));
    } else {
      e = &entries_[next_];
      *e = std::move(fresh);
      next_ = (next_ + 1) % kSize;
    }
    finite = finite && e->finite;
    return {e->text};
  }

 private:
  static constexpr std::size_t kSize = 8;
  struct Entry {
    T value;
    std::string text;
    bool finite;
  };
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
};

// Two estimates whose JSON is the same bytes: the written fields, numbers bit for bit (-0 and 0
// are written apart).
bool same_written_memory(const MemoryEstimate& a, const MemoryEstimate& b) {
  const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  if (bits(a.peak_bytes) != bits(b.peak_bytes) ||
      bits(a.capacity_bytes) != bits(b.capacity_bytes) || a.fits != b.fits ||
      a.components.size() != b.components.size())
    return false;
  for (std::size_t i = 0; i < a.components.size(); ++i)
    if (a.components[i].first != b.components[i].first ||
        bits(a.components[i].second) != bits(b.components[i].second))
      return false;
  return true;
}

OffloadResult read_offload(const JsonReader& r) {
  if (!r.value().is_object()) r.fail("must be an object");
  for (const auto& item : r.value().items())
    if (std::find_if(std::begin(kOffloadKeys), std::end(kOffloadKeys),
                     [&](const char* k) { return item.key() == k; }) == std::end(kOffloadKeys))
      r.at(item.key()).fail("unknown key");
  OffloadResult o;
  const auto f = offload_fields(o);
  for (std::size_t i = 0; i < f.size(); ++i) *f[i] = r.at(kOffloadKeys[i]).get_nonnegative();
  return o;
}

bool same_memory(const MemoryEstimate& a, const MemoryEstimate& b) {
  return a.peak_bytes == b.peak_bytes && a.capacity_bytes == b.capacity_bytes && a.fits == b.fits &&
         std::map<std::string, double>(a.components.begin(), a.components.end()) ==
             std::map<std::string, double>(b.components.begin(), b.components.end());
}

}  // namespace

bool StepResult::operator==(const StepResult& o) const {
  return schema_version == o.schema_version && scenario == o.scenario &&
         step_time_s == o.step_time_s && tflops_per_gpu == o.tflops_per_gpu &&
         tokens_per_s == o.tokens_per_s && model_flops_per_step == o.model_flops_per_step &&
         counted_flops_per_step == o.counted_flops_per_step &&
         counted_tflops_per_gpu == o.counted_tflops_per_gpu &&
         mfu_flops_per_step == o.mfu_flops_per_step &&
         peak_tflops_per_gpu == o.peak_tflops_per_gpu && mfu == o.mfu && hfu == o.hfu &&
         breakdown == o.breakdown && comm == o.comm && same_memory(memory, o.memory) &&
         warnings == o.warnings && engine_events == o.engine_events &&
         has_offload == o.has_offload && offload == o.offload;
}

json to_json(const StepResult& r) {
  json j = json::object();
  JsonTreeObject tree(j);
  TreeParts parts;
  write_result(tree, r, parts);
  return j;
}

// The text's parts: each distinct value's dump, and whether its numbers are finite.
struct StepResultText::Parts {
  DumpMemo<ModelShape> models;
  DumpMemo<Strategy> strategies;
  DumpMemo<MemoryEstimate> memories;
  bool finite = true;
  JsonText of(const ModelShape& m) { return models.text(m, std::equal_to<>(), finite); }
  JsonText of(const Strategy& s) { return strategies.text(s, std::equal_to<>(), finite); }
  JsonText of(const MemoryEstimate& m) { return memories.text(m, same_written_memory, finite); }
};

StepResultText::StepResultText() : parts_(std::make_unique<Parts>()) {}
StepResultText::~StepResultText() = default;

bool StepResultText::write(JsonTextWriter& out, const StepResult& r) {
  parts_->finite = true;
  out.begin_object();
  write_result(out, r, *parts_);
  out.end_object();
  return parts_->finite && out.all_finite();
}

StepResult step_result_from_json(const JsonReader& r) {
  r.require_object({"schema_version", "scenario", "step_time_s", "tflops_per_gpu", "tokens_per_s",
                    "model_flops_per_step", "counted_flops_per_step", "counted_tflops_per_gpu",
                    "mfu_flops_per_step", "peak_tflops_per_gpu", "mfu", "hfu", "breakdown", "comm",
                    "memory", "warnings", "engine", "offload"});
  StepResult s;
  // Compared as read, before any narrowing: 2^32 + 1 is not version 1.
  const JsonReader version = r.at("schema_version");
  if (version.get_int() != kResultSchemaVersion)
    version.fail(
        fmt::format("this zerosim reads result schema version {} (docs/result-schema.json)",
                    kResultSchemaVersion));
  s.scenario = read_scenario(r.at("scenario"));
  s.step_time_s = r.at("step_time_s").get_positive();
  s.tflops_per_gpu = r.at("tflops_per_gpu").get_nonnegative();
  s.tokens_per_s = r.at("tokens_per_s").get_nonnegative();
  s.model_flops_per_step = r.at("model_flops_per_step").get_nonnegative();
  s.counted_flops_per_step = r.at("counted_flops_per_step").get_nonnegative();
  s.counted_tflops_per_gpu = r.at("counted_tflops_per_gpu").get_nonnegative();
  s.mfu_flops_per_step = r.at("mfu_flops_per_step").get_nonnegative();
  s.peak_tflops_per_gpu = r.at("peak_tflops_per_gpu").get_nonnegative();
  s.mfu = r.at("mfu").get_nonnegative();
  s.hfu = r.at("hfu").get_nonnegative();
  s.breakdown = read_breakdown(r.at("breakdown"));
  s.comm = read_comm(r.at("comm"));
  s.memory = read_memory(r.at("memory"));
  const JsonReader w = r.at("warnings");
  for (std::size_t i = 0; i < w.array_size(); ++i) s.warnings.push_back(w.at(i).get_string());
  const JsonReader e = r.at("engine");
  e.require_object({"events"});
  s.engine_events = get_count(e.at("events"));
  s.has_offload = r.has("offload");
  if (s.has_offload) s.offload = read_offload(r.at("offload"));
  return s;
}

}  // namespace zerosim
