#include "sim/report/result_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/core/error.hpp"

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

std::string opt_string(const JsonReader& sc, std::string_view key) {
  if (!sc.has(key)) return "";
  const json& v = sc.at(key).value();
  // simulate() echoes resolved objects for some fields ({"name": ...} for model, strategy,
  // profile).
  if (v.is_object() && v.contains("name") && v["name"].is_string())
    return v["name"].get<std::string>();
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Optional scenario fields: absent -> fallback; present but mistyped or out of range -> InputError
// (a silent 0 would mislabel the row, and casting a huge double to int is undefined behaviour).
double opt_number(const JsonReader& sc, std::string_view key, double fallback) {
  return sc.has(key) ? sc.at(key).get_nonnegative() : fallback;
}

int opt_int(const JsonReader& sc, std::string_view key, int fallback) {
  if (!sc.has(key)) return fallback;
  const JsonReader r = sc.at(key);
  const std::int64_t v = r.get_int();
  if (v < 0 || v > std::numeric_limits<int>::max())
    r.fail(fmt::format("must be between 0 and {} (got {})", std::numeric_limits<int>::max(), v));
  return static_cast<int>(v);
}

}  // namespace

std::string strategy_display(const std::string& strategy) {
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
  Techniques t = parse_techniques(strategy);
  if (!t.known) return 100;
  int count = t.qwz + t.hpz + t.qgz;
  // zero3=0; singles 1..3 (qwZ, hpZ, qgZ); pairs 4..6; ZeRO++ 7.
  if (count == 0) return 0;
  if (count == 3) return 7;
  if (count == 1) return t.qwz ? 1 : t.hpz ? 2 : 3;
  return !t.qgz ? 4 : !t.hpz ? 5 : 6;
}

std::string ResultView::label() const {
  std::string out = model.empty() ? "?" : model;
  if (nodes > 0) out += fmt::format(", {} node{}", nodes, nodes == 1 ? "" : "s");
  if (nics_per_node > 0 && nic_gbps > 0)
    out += fmt::format(", {}x{:g} Gbps", nics_per_node, nic_gbps);
  out += ", " + strategy_display(strategy);
  if (tokens_per_gpu > 0) out += fmt::format(", {} tok/GPU", tokens_per_gpu);
  if (grad_accum > 1) out += fmt::format(", ga {}", grad_accum);
  if (!tier.empty() && tier != "flow") out += ", " + tier;
  return out;
}

ResultView read_result(const JsonReader& r) {
  ResultView v;
  if (!r.value().is_object()) r.fail("a result must be an object");
  if (r.has("scenario")) {
    JsonReader sc = r.at("scenario");
    if (!sc.value().is_object()) sc.fail("must be an object");
    v.scenario = sc.value();
    v.cluster = opt_string(sc, "cluster");
    v.model = opt_string(sc, "model");
    v.strategy = opt_string(sc, "strategy");
    v.tier = opt_string(sc, "tier");
    v.profile = opt_string(sc, "profile");
    v.nodes = opt_int(sc, "nodes", 0);
    v.gpus = opt_int(sc, "world_size", opt_int(sc, "gpus", 0));
    v.nics_per_node = opt_int(sc, "nics_per_node", 0);
    v.nic_gbps = opt_number(sc, "nic_gbps", 0);
    v.fabric = opt_string(sc, "fabric");
    v.oversubscription = opt_number(sc, "oversubscription", 1);
    v.tokens_per_gpu = opt_int(sc, "tokens_per_gpu", 0);
    v.seq_len = opt_int(sc, "seq_len", 0);
    v.grad_accum = opt_int(sc, "grad_accum", 1);
  }
  v.step_time_s = r.at("step_time_s").get_positive();
  v.tflops_per_gpu = r.at("tflops_per_gpu").get_nonnegative();
  v.tokens_per_s = r.at("tokens_per_s").get_nonnegative();
  JsonReader b = r.at("breakdown");
  v.compute_s = b.at("compute_s").get_nonnegative();
  v.recompute_s = b.number_or("recompute_s", 0);
  v.optimizer_s = b.number_or("optimizer_s", 0);
  v.param_fetch_s = b.number_or("param_fetch_s", 0);
  v.quant_kernels_s = b.number_or("quant_kernels_s", 0);
  JsonReader ex = b.at("exposed_comm_s");
  v.exposed_all_gather_s = ex.number_or("all_gather", 0);
  v.exposed_reduce_scatter_s = ex.number_or("reduce_scatter", 0);
  v.exposed_all_to_all_s = ex.number_or("all_to_all", 0);
  v.exposed_all_reduce_s = ex.number_or("all_reduce", 0);
  v.exposed_kernels_s = b.number_or("exposed_kernels_s", 0);
  v.idle_s = b.number_or("idle_s", 0);
  JsonReader c = r.at("comm");
  v.inter_node_bytes = c.at("inter_node_bytes").get_nonnegative();
  v.intra_node_bytes = c.at("intra_node_bytes").get_nonnegative();
  JsonReader m = r.at("memory");
  v.peak_bytes_per_gpu = m.at("peak_bytes_per_gpu").get_nonnegative();
  v.capacity_bytes = m.number_or("capacity_bytes", 0);
  v.fits = m.at("fits").get_bool();
  if (r.has("warnings")) {
    JsonReader w = r.at("warnings");
    for (std::size_t i = 0; i < w.array_size(); ++i) v.warnings.push_back(w.at(i).get_string());
  }
  return v;
}

ResultView view_of(const StepResult& r) {
  ResultView v;
  const ScenarioEcho& sc = r.scenario;
  v.scenario = to_json(r).at("scenario");
  v.cluster = sc.cluster;
  v.model = sc.model.name;
  v.strategy = sc.strategy.name();
  v.tier = sc.tier;
  v.profile = sc.profile_name;
  v.nodes = sc.nodes;
  v.gpus = sc.world_size;
  v.nics_per_node = sc.nics_per_node;
  v.nic_gbps = sc.nic_gbps;
  v.fabric = sc.fabric;
  v.oversubscription = sc.oversubscription;
  v.tokens_per_gpu = static_cast<int>(sc.tokens_per_gpu);
  v.seq_len = sc.seq_len;
  v.grad_accum = sc.grad_accum;
  v.step_time_s = r.step_time_s;
  v.tflops_per_gpu = r.tflops_per_gpu;
  v.tokens_per_s = r.tokens_per_s;
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

std::vector<ResultView> read_results(const json& doc, const std::string& file) {
  JsonReader root(doc, file);
  std::vector<ResultView> out;
  auto read_array = [&](const JsonReader& arr) {
    std::size_t n = arr.array_size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(read_result(arr.at(i)));
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
        out.push_back(read_result(cands.at(i).at("result")));
    } else {
      root.at("kind").fail(fmt::format("unknown kind '{}' (expected sweep or plan)", kind));
    }
  } else if (doc.is_object() && doc.contains("step_time_s")) {
    out.push_back(read_result(root));
  } else {
    root.fail(
        "not a zerosim results file (expected a sweep, a plan, an array of results or one result)");
  }
  if (out.empty()) root.fail("contains no results");
  return out;
}

std::vector<ResultView> load_results(const std::string& path) {
  return read_results(load_json_file(path), path);
}

}  // namespace zerosim::report
