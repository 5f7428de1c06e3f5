#include "sim/report/result_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/report/svg_chart.hpp"
#include "sim/result/deepspeed_block.hpp"

namespace zerosim::report {

namespace {

// Chart colors of the strategies outside the palette's ten, which the stage-3 variants (by their
// rank) and unknown strategies use.
const char* own_color(StrategyKind k) {
  switch (k) {
    case StrategyKind::Zero1:
      return "#17BECF";
    case StrategyKind::Zero2:
      return "#BCBD22";
    case StrategyKind::Hsdp:
      return "#9467BD";
    case StrategyKind::FsdpFullShard:
      return "#D62728";
    case StrategyKind::FsdpShardGradOp:
      return "#FF9896";
    case StrategyKind::FsdpHybridShard:
      return "#AD494A";
    case StrategyKind::Fsdp2:
      return "#8C564B";
    case StrategyKind::Zero3:
      break;
  }
  return nullptr;
}

}  // namespace

std::string strategy_display(const std::string& strategy) {
  const auto id = find_strategy_id(strategy);
  return id ? id->display() : strategy;
}

int strategy_rank(const std::string& strategy) {
  const auto id = find_strategy_id(strategy);
  return id ? id->rank() : 100;
}

std::vector<const ResultView*> distinct_strategies(const std::vector<const ResultView*>& rows) {
  std::vector<const ResultView*> s;
  for (const ResultView* r : rows)
    if (std::none_of(s.begin(), s.end(),
                     [r](const ResultView* o) { return o->strategy_key() == r->strategy_key(); }))
      s.push_back(r);
  std::stable_sort(s.begin(), s.end(), [](const ResultView* a, const ResultView* b) {
    return strategy_rank(a->strategy) < strategy_rank(b->strategy);
  });
  return s;
}

namespace {

// `hex` ("#RRGGBB") mixed with white: fraction 0 is the color, 1 white.
std::string lighter(const std::string& hex, double fraction) {
  if (hex.size() != 7 || fraction <= 0) return hex;
  std::string out = "#";
  for (int i = 0; i < 3; ++i) {
    const int v = std::stoi(hex.substr(1 + 2 * static_cast<std::size_t>(i), 2), nullptr, 16);
    out += fmt::format("{:02X}", static_cast<int>(std::lround(v + (255 - v) * fraction)));
  }
  return out;
}

}  // namespace

std::string strategy_color(const std::string& strategy, std::size_t shade) {
  const auto id = find_strategy_id(strategy);
  const std::string base = !id ? palette(9)
                           : own_color(id->kind) != nullptr
                               ? own_color(id->kind)
                               : palette(static_cast<std::size_t>(id->rank()));
  return lighter(base, std::min(0.75, 0.3 * static_cast<double>(shade)));
}

std::string neutral_color(std::size_t k) {
  static const char* greys[] = {"#4D4D4D", "#8C8C8C", "#262626", "#B3B3B3", "#666666", "#A6A6A6"};
  return greys[k % std::size(greys)];
}

int ResultView::techniques() const {
  const auto id = find_strategy_id(strategy);
  return id ? id->techniques() : 0;
}

std::string ResultView::strategy_name() const {
  return variant.empty() ? strategy_display(strategy)
                         : strategy_display(strategy) + " (" + variant + ")";
}

double ResultView::x_value(XAxis x) const {
  switch (x) {
    case XAxis::bandwidth:
      return network_gbps_per_node();
    case XAxis::gpus:
      return gpus;
    case XAxis::tokens_per_gpu:
      return static_cast<double>(tokens_per_gpu);
  }
  return 0;
}

std::string experiment_details(const ResultView& r, XAxis x) {
  std::string out;
  if (r.fabric == "fat-tree" || r.oversubscription != 1)
    out += fmt::format(", {} {:g}:1", r.fabric, r.oversubscription);
  if (r.tokens_per_gpu > 0 && x != XAxis::tokens_per_gpu)
    out += fmt::format(", {} tokens/GPU", r.tokens_per_gpu);
  if (r.grad_accum > 1) out += fmt::format(", grad-accum {}", r.grad_accum);
  if (!r.tier.empty() && r.tier != "flow") out += ", " + r.tier + " tier";
  if (!r.checkpointing) out += ", no activation checkpointing";
  if (!r.attention.empty()) out += ", " + r.attention + " attention";
  if (!r.profile.empty() && r.profile != r.cluster) out += ", profile " + r.profile;
  return out;
}

std::string ResultView::label() const {
  std::string out = model.empty() ? "?" : model;
  if (nodes > 0) out += fmt::format(", {} node{}", nodes, nodes == 1 ? "" : "s");
  if (show_gpu) out += " of " + gpu_model;
  if (nics_per_node > 0 && nic_gbps > 0)
    out += fmt::format(", {}x{:g} Gbps", nics_per_node, nic_gbps);
  return out + ", " + strategy_name() + experiment_details(*this);
}

std::string format_utilization(double fraction) {
  return std::isnan(fraction) ? "-" : fmt::format("{:.1f}%", 100 * fraction);
}

namespace {

// The non-default settings of a strategy's techniques (ResultView::variant).
std::string variant_of(const Strategy& st, int gpus_per_node) {
  std::string v;
  const auto add = [&v](const std::string& part) { v += (v.empty() ? "" : ", ") + part; };
  if (st.qwz && st.weight_bits != 8) add(fmt::format("qwZ INT{}", st.weight_bits));
  if (st.hpz && st.hpz_size > 0 && st.hpz_size != gpus_per_node)
    add(fmt::format("hpZ k={}", st.hpz_size));
  if (st.qgz && st.qgz_chunks > 1) add(fmt::format("qgZ {} chunks", st.qgz_chunks));
  if (st.hsdp && st.shard_size > 0 && st.shard_size != gpus_per_node)
    add(fmt::format("S={}", st.shard_size));
  if (st.fsdp.sharding == FsdpSharding::FullyShard && st.hybrid())
    add(fmt::format("2-D mesh, shard {}", st.shard_size));
  if (st.family() == StrategyFamily::Fsdp) {
    const FsdpOptions& f = st.fsdp;
    if (f.backward_prefetch != BackwardPrefetch::Pre)
      add(fmt::format("backward_prefetch {}", to_string(f.backward_prefetch)));
    if (f.forward_prefetch) add("forward_prefetch");
    if (!f.limit_all_gathers) add("limit_all_gathers off");
    if (f.param_bytes != 2) add(fmt::format("param {}-byte", f.param_bytes));
    if (st.grad_comm_bytes != f.param_bytes) add(fmt::format("reduce {}-byte", st.grad_comm_bytes));
  }
  return v;
}

}  // namespace

ResultView view_of(const StepResult& r) {
  ResultView v;
  const ScenarioEcho& sc = r.scenario;
  v.identity = to_json(r).at("scenario").dump();
  if (const ordered_json block = zero_optimization_block(sc.strategy, sc.gpus_per_node);
      !block.is_null())
    v.deepspeed_block = ordered_json{{"zero_optimization", block}}.dump();
  v.cluster = sc.cluster;
  v.gpu_model = sc.gpu_model;
  v.model = sc.model.name;
  v.params = sc.params;
  v.active_params = sc.active_params;
  v.strategy = sc.strategy.name();
  v.variant = variant_of(sc.strategy, sc.gpus_per_node);
  v.deepspeed_version = to_string(sc.strategy.deepspeed_version);
  if (sc.strategy.hpz) {
    v.hpz_rule = to_string(hpz_rule(sc.strategy.deepspeed_version));
    v.hpz_rule_text = describe(hpz_rule(sc.strategy.deepspeed_version));
  }
  v.checkpointing = sc.activation_checkpointing;
  v.attention = sc.attention;
  v.tier = sc.tier;
  v.profile = sc.profile_name;
  v.nodes = sc.nodes;
  v.gpus = sc.world_size;
  v.nics_per_node = sc.nics_per_node;
  v.nic_gbps = sc.nic_gbps;
  v.fabric = sc.fabric;
  v.oversubscription = sc.oversubscription;
  v.tokens_per_gpu = sc.tokens_per_gpu;
  v.seq_len = sc.seq_len;
  v.grad_accum = sc.grad_accum;
  v.step_time_s = r.step_time_s;
  v.tflops_per_gpu = r.tflops_per_gpu;
  v.tokens_per_s = r.tokens_per_s;
  v.mfu = r.mfu;
  v.hfu = r.hfu;
  const StepTimeBreakdown& b = r.breakdown;
  v.compute_s = b.compute_s;
  v.recompute_s = b.recompute_s;
  v.optimizer_s = b.optimizer_s;
  v.param_fetch_s = b.param_fetch_s;
  v.quant_kernels_s = b.quant_kernels_s;
  v.exposed_all_gather_s = b.exposed_comm.all_gather_s;
  v.exposed_reduce_scatter_s = b.exposed_comm.reduce_scatter_s;
  v.exposed_all_to_all_s = b.exposed_comm.all_to_all_s;
  v.exposed_all_reduce_s = b.exposed_comm.all_reduce_s;
  v.exposed_kernels_s = b.exposed_kernels_s;
  v.idle_s = b.idle_s;
  v.inter_node_bytes = r.comm.inter_node_bytes;
  v.intra_node_bytes = r.comm.intra_node_bytes;
  v.peak_bytes_per_gpu = r.memory.peak_bytes;
  v.capacity_bytes = r.memory.capacity_bytes;
  v.fits = r.memory.fits;
  v.warnings = r.warnings;
  return v;
}

std::vector<ResultView> views_of(const std::vector<StepResult>& results) {
  std::vector<ResultView> views;
  views.reserve(results.size());
  for (const StepResult& r : results) views.push_back(view_of(r));
  const bool several = std::any_of(views.begin(), views.end(), [&](const ResultView& v) {
    return v.gpu_model != views.front().gpu_model;
  });
  for (ResultView& v : views) v.show_gpu = several;
  return views;
}

std::vector<StepResult> read_step_results(const json& doc, const std::string& file) {
  JsonReader root(doc, file);
  std::vector<StepResult> out;
  auto read_array = [&](const JsonReader& arr) {
    std::size_t n = arr.array_size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(step_result_from_json(arr.at(i)));
  };
  if (doc.is_array()) {
    read_array(root);
  } else if (doc.is_object() && doc.contains("kind")) {
    std::string kind = root.at("kind").get_string();
    if (kind == "sweep") {
      read_array(root.at("results"));
    } else if (kind == "plan") {
      JsonReader cands = root.at("candidates");
      for (std::size_t i = 0; i < cands.array_size(); ++i)
        out.push_back(step_result_from_json(cands.at(i).at("result")));
    } else {
      root.at("kind").fail(fmt::format("unknown kind '{}' (expected sweep or plan)", kind));
    }
  } else if (doc.is_object() && (doc.contains("schema_version") || doc.contains("step_time_s"))) {
    out.push_back(step_result_from_json(root));
  } else {
    root.fail(
        "not a zerosim results file (expected a sweep, a plan, an array of results or one result)");
  }
  if (out.empty()) root.fail("contains no results");
  return out;
}

std::vector<ResultView> read_results(const json& doc, const std::string& file) {
  std::vector<ResultView> views = views_of(read_step_results(doc, file));
  if (doc.is_object() && doc.value("kind", "") == "plan")  // candidates in rank order
    for (std::size_t i = 0; i < views.size(); ++i) views[i].plan_rank = static_cast<int>(i) + 1;
  return views;
}

std::vector<ResultView> load_results(const std::string& path) {
  return read_results(load_json_file(path), path);
}

}  // namespace zerosim::report
