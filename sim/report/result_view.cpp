#include "sim/report/result_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/report/svg_chart.hpp"

namespace zerosim::report {

namespace {

struct Techniques {
  bool qwz = false, hpz = false, qgz = false, known = true;
};

Techniques parse_techniques(const std::string& s) {
  Techniques t;
  if (s == "zeropp") {
    t.qwz = t.hpz = t.qgz = true;
    return t;
  }
  std::size_t start = 0;
  bool first = true;
  while (start <= s.size()) {
    auto plus = s.find('+', start);
    std::string part =
        s.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    if (first) {
      if (part != "zero3") t.known = false;
      first = false;
    } else if (part == "qwz") {
      t.qwz = true;
    } else if (part == "hpz") {
      t.hpz = true;
    } else if (part == "qgz") {
      t.qgz = true;
    } else {
      t.known = false;
    }
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return t;
}

// The strategies beside stage 3 and its ZeRO++ components: name, display name, sort rank (stages 1
// and 2 before ZeRO-3, HSDP after ZeRO++) and chart color (outside the palette's ten, which
// the stage-3 variants and unknown strategies use).
struct OtherStrategy {
  const char* name;
  const char* display;
  int rank;
  const char* color;
};
constexpr OtherStrategy kOtherStrategies[] = {{"zero1", "ZeRO-1", -2, "#17BECF"},
                                              {"zero2", "ZeRO-2", -1, "#BCBD22"},
                                              {"hsdp", "HSDP", 8, "#9467BD"}};

const OtherStrategy* other_strategy(const std::string& s) {
  for (const auto& o : kOtherStrategies)
    if (s == o.name) return &o;
  return nullptr;
}

}  // namespace

std::string strategy_display(const std::string& strategy) {
  if (const OtherStrategy* o = other_strategy(strategy)) return o->display;
  Techniques t = parse_techniques(strategy);
  if (!t.known) return strategy;
  if (t.qwz && t.hpz && t.qgz) return "ZeRO++";
  std::string out = "ZeRO-3";
  if (t.qwz) out += " + qwZ";
  if (t.hpz) out += " + hpZ";
  if (t.qgz) out += " + qgZ";
  return out;
}

int strategy_rank(const std::string& strategy) {
  if (const OtherStrategy* o = other_strategy(strategy)) return o->rank;
  Techniques t = parse_techniques(strategy);
  if (!t.known) return 100;
  int count = t.qwz + t.hpz + t.qgz;
  // zero3=0; singles 1..3 (qwZ, hpZ, qgZ); pairs 4..6; ZeRO++ 7.
  if (count == 0) return 0;
  if (count == 3) return 7;
  if (count == 1) return t.qwz ? 1 : t.hpz ? 2 : 3;
  return !t.qgz ? 4 : !t.hpz ? 5 : 6;
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

std::string strategy_color(const std::string& strategy) {
  if (const OtherStrategy* o = other_strategy(strategy)) return o->color;
  const int rank = strategy_rank(strategy);
  return palette(rank < 100 ? static_cast<std::size_t>(rank) : 9);
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
  return v;
}

}  // namespace

ResultView view_of(const StepResult& r) {
  ResultView v;
  const ScenarioEcho& sc = r.scenario;
  v.identity = to_json(r).at("scenario").dump();
  v.cluster = sc.cluster;
  v.model = sc.model.name;
  v.strategy = sc.strategy.name();
  v.variant = variant_of(sc.strategy, sc.gpus_per_node);
  v.deepspeed_version = to_string(sc.strategy.deepspeed_version);
  if (sc.strategy.hpz) v.hpz_rule = to_string(hpz_rule(sc.strategy.deepspeed_version));
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
  return views_of(read_step_results(doc, file));
}

std::vector<ResultView> load_results(const std::string& path) {
  return read_results(load_json_file(path), path);
}

}  // namespace zerosim::report
