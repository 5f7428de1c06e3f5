#include "sim/report/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/units.hpp"
#include "sim/report/scaling.hpp"
#include "sim/report/technique_notes.hpp"
#include "sim/report/training_time.hpp"
#include "sim/report/warnings.hpp"

namespace zerosim::report {

namespace {
// A CSV number, empty when the document has none (NaN).
std::string csv_number(double v) { return std::isnan(v) ? "" : fmt::format("{}", v); }
}  // namespace

std::string csv_field(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t[0] == '=' || t[0] == '+' || t[0] == '-' || t[0] == '@')) {
    // Numbers may start with '-' legitimately; only prefix non-numeric text.
    bool numeric = t.find_first_not_of("-+0123456789.eE") == std::string::npos;
    if (!numeric) t = "'" + t;
  }
  if (t.find_first_of(",\"\n\r") == std::string::npos) return t;
  std::string out = "\"";
  for (char c : t) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '`':
        out += "\\`";
        break;
      case '*':
        out += "\\*";
        break;
      case '_':
        out += "\\_";
        break;
      case '[':
        out += "\\[";
        break;
      case ']':
        out += "\\]";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string experiment_key(const ResultView& r, XAxis x) {
  std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}",
                                r.cluster, r.fabric, r.oversubscription, r.model, r.seq_len,
                                r.grad_accum, r.tier, r.profile, r.checkpointing, r.attention);
  if (x != XAxis::gpus) key += fmt::format("\x1fnodes {}", r.nodes);
  if (x != XAxis::bandwidth) key += fmt::format("\x1fnet {}x{}", r.nics_per_node, r.nic_gbps);
  if (x != XAxis::tokens_per_gpu) key += fmt::format("\x1ftokens {}", r.tokens_per_gpu);
  return key;
}

std::string experiment_title(const ResultView& r, XAxis x) {
  std::string out = r.model.empty() ? "?" : r.model;
  if (!r.cluster.empty()) out += " on " + r.cluster;
  if (x != XAxis::gpus) {
    if (r.nodes > 0) out += fmt::format(" x{} node{}", r.nodes, r.nodes == 1 ? "" : "s");
    if (r.gpus > 0) out += fmt::format(" ({} GPUs)", r.gpus);
  }
  const double bw = r.network_gbps_per_node();
  if (x != XAxis::bandwidth && bw > 0) out += fmt::format(", {:g} Gbps per node", bw);
  return out + experiment_details(r, x);
}

const ResultView* zero3_baseline(const std::vector<ResultView>& all, const ResultView& r) {
  std::string key = group_key(r);
  for (const auto& o : all)
    if (o.strategy == "zero3" && o.variant.empty() && group_key(o) == key &&
        o.nics_per_node == r.nics_per_node && o.nic_gbps == r.nic_gbps)
      return &o;
  return nullptr;
}

Recommendation recommend(const std::vector<const ResultView*>& rows) {
  Recommendation out;
  std::vector<DecisionOption> options;
  options.reserve(rows.size());
  for (const ResultView* r : rows) {
    if (r->strategy == "zero3" && r->variant.empty()) out.zero3 = r;
    options.push_back({r->tokens_per_s, r->techniques(), r->fits});
  }
  if (const auto i = recommend_index(options)) out.pick = rows[*i];
  if (const auto i = fastest_index(options)) out.fastest = rows[*i];
  return out;
}

std::string Recommendation::sentence() const {
  if (!pick) return "nothing fits in GPU memory";
  std::string s = pick->strategy_name();
  if (zero3 && zero3 != pick && zero3->fits)
    s +=
        fmt::format(" ({:.2f}x ZeRO-3's throughput)", pick->tflops_per_gpu / zero3->tflops_per_gpu);
  else if (zero3 && !zero3->fits)
    s += " (ZeRO-3 does not fit)";
  if (pick != fastest)
    s += fmt::format(
        "; {} is {:.1f}% faster, within {:.0f}%: the one with fewer ZeRO++ techniques is "
        "recommended",
        fastest->strategy_name(), 100 * (fastest->tokens_per_s / pick->tokens_per_s - 1),
        100 * kTieFraction);
  if (!pick->deepspeed_version.empty())
    s += fmt::format(", assuming DeepSpeed {}", pick->deepspeed_version);
  // hpZ's gain depends on the release's rule and on activation checkpointing (docs/step-model.md,
  // DeepSpeed releases): without checkpointing there is no recompute, and the backward's gathers
  // read the intra-node copy in every release.
  if (!pick->hpz_rule.empty()) {
    const bool current = pick->hpz_rule == to_string(HpzRule::WhenPresent);
    if (pick->checkpointing)
      s += current ? " (hpZ's gain relies on 0.13.2 or later: there the checkpointed recompute "
                     "and later micro-steps gather inside the node; before, only the backward "
                     "hooks do)"
                   : " (hpZ's gain is smaller than from 0.13.2 on, where the checkpointed "
                     "recompute and later micro-steps gather inside the node)";
    else
      s += current ? " (without activation checkpointing hpZ serves the backward's gathers in "
                     "every release; from 0.13.2 also later micro-steps' forwards)"
                   : " (without activation checkpointing hpZ serves the backward's gathers; "
                     "from 0.13.2 it also serves later micro-steps' forwards)";
  }
  return s;
}

std::optional<Recommendation> plan_recommendation(const std::vector<ResultView>& results) {
  std::vector<const ResultView*> rows;
  const bool any_flow = std::any_of(results.begin(), results.end(), [](const ResultView& r) {
    return r.plan_rank > 0 && r.tier == "flow";
  });
  for (const ResultView& r : results)
    if (r.plan_rank > 0 && (!any_flow || r.tier == "flow")) rows.push_back(&r);
  if (rows.empty()) return std::nullopt;
  return recommend(rows);
}

std::string plan_recommendation_line(const Recommendation& rec) {
  if (!rec.pick) return rec.sentence();
  const ResultView& p = *rec.pick;
  return fmt::format("#{} {}, micro-batch {} x {}, activation checkpointing {}: {}", p.plan_rank,
                     p.strategy_name(), p.seq_len > 0 ? p.tokens_per_gpu / p.seq_len : 0,
                     p.grad_accum, p.checkpointing ? "on" : "off", rec.sentence());
}

std::string Recommendation::how() const {
  return pick && !pick->deepspeed_block.empty() ? "ds_config: " + pick->deepspeed_block : "";
}

std::vector<std::pair<double, std::vector<std::string>>> notes_by_bandwidth(
    const std::vector<const ResultView*>& group) {
  std::map<double, std::vector<const ResultView*>> by_bw;
  for (const ResultView* r : group) by_bw[r->network_gbps_per_node()].push_back(r);
  std::vector<std::pair<double, std::vector<std::string>>> out;
  out.reserve(by_bw.size());
  for (const auto& [bw, rows] : by_bw) out.emplace_back(bw, technique_notes(rows));
  return out;
}

std::vector<std::pair<double, Recommendation>> recommendations(
    const std::vector<const ResultView*>& group) {
  std::map<double, std::vector<const ResultView*>> by_bw;
  for (const ResultView* r : group) by_bw[r->network_gbps_per_node()].push_back(r);
  std::vector<std::pair<double, Recommendation>> out;
  out.reserve(by_bw.size());
  for (const auto& [bw, rows] : by_bw) out.emplace_back(bw, recommend(rows));
  return out;
}

std::string csv_header() {
  return "cluster,nodes,gpus,nics_per_node,nic_gbps,network_gbps_per_node,fabric,oversubscription,"
         "model,params,active_params,strategy,variant,activation_checkpointing,attention,"
         "tokens_per_gpu,seq_len,"
         "grad_accum,tier,step_time_s,tflops_per_gpu,mfu,hfu,tokens_per_s,compute_s,recompute_s,"
         "optimizer_s,"
         "param_fetch_s,quant_kernels_s,exposed_all_gather_s,exposed_reduce_scatter_s,exposed_all_"
         "to_all_s,inter_node_bytes,"
         "intra_node_bytes,peak_bytes_per_gpu,capacity_bytes,fits,warnings\n";
}

std::string csv_row(const ResultView& r) {
  std::string warnings;
  for (const auto& w : r.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"
      "{},{},{},{},{},{},{},{}\n",
      csv_field(r.cluster), r.nodes, r.gpus, r.nics_per_node, r.nic_gbps, r.network_gbps_per_node(),
      csv_field(r.fabric), r.oversubscription, csv_field(r.model), r.params, r.active_params,
      csv_field(r.strategy), csv_field(r.variant), r.checkpointing ? "true" : "false",
      csv_field(r.attention), r.tokens_per_gpu, r.seq_len, r.grad_accum, csv_field(r.tier),
      r.step_time_s, r.tflops_per_gpu, csv_number(r.mfu), csv_number(r.hfu), r.tokens_per_s,
      r.compute_s, r.recompute_s, r.optimizer_s, r.param_fetch_s, r.quant_kernels_s,
      r.exposed_all_gather_s, r.exposed_reduce_scatter_s, r.exposed_all_to_all_s,
      r.inter_node_bytes, r.intra_node_bytes, r.peak_bytes_per_gpu, r.capacity_bytes,
      r.fits ? "true" : "false", csv_field(warnings));
}

std::string render_csv(const std::vector<ResultView>& results) {
  std::string out = csv_header();
  for (const auto& r : results) out += csv_row(r);
  return out;
}

namespace {

// A recommendation's ds_config as a code span on its own line, after `indent` ("" without one).
std::string md_config(const std::string& how, const std::string& indent) {
  return how.empty() ? "" : indent + "`" + how + "`\n";
}

// Per scaling group (scaling.hpp): tokens/s, per GPU, and the scaling efficiency by GPU count.
std::string scaling_markdown(const std::vector<ResultView>& results) {
  const std::vector<AxisGroup> groups = scaling_groups(results);
  if (groups.empty()) return "";
  std::string out =
      "## Scaling with cluster size\n\nScaling efficiency: tokens/s per GPU relative to the same "
      "strategy on the smallest cluster of the series (1.00 = linear).\n\n";
  for (const AxisGroup& g : groups) {
    out += "### " + md_cell(g.title) + "\n\n";
    out += "| GPUs | strategy | tokens/s | tokens/s per GPU | scaling efficiency | fits |\n";
    out += "|---:|---|---:|---:|---:|---|\n";
    for (double n : g.xs)
      for (const ResultView* r : g.rows) {
        if (r->gpus != n) continue;
        const double eff = scaling_efficiency(g, *r);
        out += fmt::format("| {:g} | {} | {:.0f} | {:.1f} | {} | {} |\n", n,
                           md_cell(r->strategy_name()), r->tokens_per_s, r->tokens_per_s / n,
                           std::isnan(eff) ? "-" : fmt::format("{:.2f}", eff),
                           r->fits ? "yes" : "**no**");
      }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_markdown(const std::vector<ResultView>& results, const std::string& source,
                            const TrainingBudget& budget) {
  std::string out = "# zerosim report\n\n";
  out += fmt::format(
      "Source: `{}` ({} scenario{}). Throughput is Megatron-LM model TFLOPs per GPU "
      "(with activation checkpointing); speedup is against ZeRO-3 in the same group and "
      "network. MFU: the architecture's model FLOPs (no recompute) over the GPUs' peak; HFU: the "
      "FLOPs executed (recompute included) over the peak.\n\n",
      md_cell(source), results.size(), results.size() == 1 ? "" : "s");
  // A plan's decision over all its candidates; else one per experiment and bandwidth.
  const std::optional<Recommendation> plan = plan_recommendation(results);
  if (plan)
    out += "## Recommended configuration\n\nThe plan's decision: " +
           md_cell(plan_recommendation_line(*plan)) + "\n\n" + md_config(plan->how(), "") + "\n";
  // Groups in order of first appearance (input order is deterministic).
  for (const AxisGroup& g : axis_groups(results, XAxis::bandwidth)) {
    const std::vector<const ResultView*>& rows = g.rows;
    out += "## " + md_cell(g.title) + "\n\n";
    if (!plan) {
      for (const auto& [bw, rec] : recommendations(rows))
        out += fmt::format("- {}: {}\n",
                           bw > 0 ? fmt::format("{:g} Gbps per node", bw) : "preset network",
                           md_cell(rec.sentence())) +
               md_config(rec.how(), "  ");
      for (const auto& [bw, notes] : notes_by_bandwidth(rows))
        for (const std::string& n : notes)
          out += fmt::format("- {}: {}\n", bw > 0 ? fmt::format("{:g} Gbps", bw) : "preset",
                             md_cell(n));
      out += "\n";
    }
    out +=
        "| network per node | strategy | step time | TFLOPs/GPU (Megatron) | MFU | HFU | tokens/s "
        "| "
        "speedup vs ZeRO-3 | exposed comm | peak memory/GPU | fits |\n";
    out += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const ResultView* r : rows) {
      const ResultView* base = zero3_baseline(results, *r);
      std::string net = r->network_gbps_per_node() > 0
                            ? fmt::format("{}x{:g} Gbps", r->nics_per_node, r->nic_gbps)
                            : "preset";
      out +=
          fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {:.0f} | {} | {} | {} | {} |\n", net,
                      md_cell(r->strategy_name()), format_time(r->step_time_s), r->tflops_per_gpu,
                      format_utilization(r->mfu), format_utilization(r->hfu), r->tokens_per_s,
                      base ? fmt::format("{:.2f}x", r->tflops_per_gpu / base->tflops_per_gpu) : "-",
                      format_time(r->exposed_comm_s()), format_bytes(r->peak_bytes_per_gpu),
                      r->fits ? "yes" : "**no**");
    }
    out += "\n";
  }
  out += scaling_markdown(results);
  if (budget.tokens > 0) out += training_time_markdown(results, budget);
  std::string warn;  // one line per distinct warning, with who gave it
  for (const WarningGroup& g : group_warnings(results))
    warn += "- " + md_cell(g.text) + " (" + md_cell(warning_scope(g, results.size())) + ")\n";
  if (!warn.empty()) out += "## Warnings\n\n" + warn + "\n";
  return out;
}

}  // namespace zerosim::report
