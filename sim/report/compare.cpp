#include "sim/report/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/tables.hpp"

namespace zerosim::report {

namespace {

// How a scenario was given, not what it is: the DeepSpeed config's or FSDP config's path or
// "--strategy", the model's description, the rule that chose the sequence length. Two results of
// one scenario pair whatever produced them.
bool provenance(const std::string& leaf) {
  return leaf == "/strategy/source" || leaf == "/model/source" || leaf == "/seq_len_source";
}

// Each result's scenario object, parsed once, as its leaves ("/strategy/hpz" -> true) without
// provenance.
std::vector<json> scenarios_of(const std::vector<ResultView>& rs) {
  std::vector<json> out;
  out.reserve(rs.size());
  for (const ResultView& r : rs) {
    json leaves = json::parse(r.identity).flatten();
    for (auto it = leaves.begin(); it != leaves.end();)
      it = provenance(it.key()) ? leaves.erase(it) : std::next(it);
    out.push_back(std::move(leaves));
  }
  return out;
}

// "strategy.reduce_bucket_elems" -> "/strategy/reduce_bucket_elems".
std::string pointer_of(const std::string& dotted) {
  std::string p = "/" + dotted;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

std::string dotted_of(const std::string& pointer) {
  std::string d = pointer.substr(1);
  std::replace(d.begin(), d.end(), '/', '.');
  return d;
}

// Whether leaf is the key or below it ("/strategy/hpz" is below "/strategy").
bool under(const std::string& leaf, const std::string& key) {
  return leaf.compare(0, key.size(), key) == 0 &&
         (leaf.size() == key.size() || leaf[key.size()] == '/');
}

// Each scenario without the keys in `by` (dotted), as matching text.
std::vector<std::string> match_keys(const std::vector<json>& scenarios,
                                    const std::vector<std::string>& by) {
  std::vector<std::string> pointers;
  pointers.reserve(by.size());
  for (const std::string& k : by) pointers.push_back(pointer_of(k));
  std::vector<std::string> out;
  out.reserve(scenarios.size());
  for (json sc : scenarios) {
    for (auto it = sc.begin(); it != sc.end();)
      it = std::any_of(pointers.begin(), pointers.end(),
                       [&it](const std::string& p) { return under(it.key(), p); })
               ? sc.erase(it)
               : std::next(it);
    out.push_back(sc.dump());
  }
  return out;
}

std::vector<CompareRow> match(const std::vector<ResultView>& a, const std::vector<json>& sa,
                              const std::vector<ResultView>& b, const std::vector<json>& sb,
                              const std::vector<std::string>& by) {
  const std::vector<std::string> ka = match_keys(sa, by), kb = match_keys(sb, by);
  std::map<std::string, const ResultView*> in_b;
  for (std::size_t i = 0; i < b.size(); ++i) in_b.emplace(kb[i], &b[i]);  // first one wins
  std::map<std::string, bool> used;
  std::vector<CompareRow> rows;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CompareRow row{a[i].label(), &a[i], nullptr};
    auto it = in_b.find(ka[i]);
    if (it != in_b.end() && !used[ka[i]]) {
      row.b = it->second;
      used[ka[i]] = true;
    }
    rows.push_back(row);
  }
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!used[kb[i]]) {
      rows.push_back({b[i].label(), nullptr, &b[i]});
      used[kb[i]] = true;
    }
  return rows;
}

bool any_pair(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.a && r.b; });
}

// The value of scenario key k if every scenario has the same one, else null.
json constant_value(const std::vector<json>& scenarios, const std::string& k) {
  json value;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const json v = scenarios[i].contains(k) ? scenarios[i].at(k) : json();
    if (i == 0)
      value = v;
    else if (v != value)
      return json();
  }
  return value;
}

}  // namespace

Comparison compare_results(const std::vector<ResultView>& a, const std::vector<ResultView>& b,
                           const std::vector<std::string>& by) {
  const std::vector<json> sa = scenarios_of(a), sb = scenarios_of(b);
  if (!sa.empty())
    for (const std::string& k : by) {
      const json& leaves = sa.front();
      const std::string p = pointer_of(k);
      std::set<std::string> known;
      bool found = false;
      for (const auto& [leaf, unused] : leaves.items()) {
        found = found || under(leaf, p);
        known.insert(leaf.substr(1, leaf.find('/', 1) - 1));
      }
      if (found) continue;
      throw flag_error("--by", fmt::format("'{}' is not a scenario key (known: {}; a nested one "
                                           "with dots, e.g. strategy.reduce_bucket_elems)",
                                           k, fmt::join(known, ", ")));
    }
  Comparison c;
  c.across = by;
  c.rows = match(a, sa, b, sb, by);
  if (!by.empty() || any_pair(c.rows) || a.empty() || b.empty()) return c;
  // Nothing matched: leave out the keys each file holds constant but the two set differently.
  std::vector<std::string> found;
  std::string what;
  for (const auto& [k, unused] : sa.front().items()) {
    const json va = constant_value(sa, k), vb = constant_value(sb, k);
    if (va.is_null() || vb.is_null() || va == vb) continue;
    found.push_back(dotted_of(k));
    what +=
        fmt::format("{}{}: {} vs {}", what.empty() ? "" : "; ", dotted_of(k), va.dump(), vb.dump());
  }
  if (found.empty()) return c;
  std::vector<CompareRow> rows = match(a, sa, b, sb, found);
  if (!any_pair(rows)) return c;
  c.rows = std::move(rows);
  c.across = std::move(found);
  c.found = std::move(what);
  return c;
}

std::string render_compare(const Comparison& c, const std::string& name_a,
                           const std::string& name_b) {
  const std::vector<CompareRow>& rows = c.rows;
  std::string o = fmt::format("A = {}\nB = {}\n\n", name_a, name_b);
  if (!c.found.empty())
    o += fmt::format(
        "No scenario is in both files as it is; matched leaving out what each file holds "
        "constant and the two set differently ({}).\n\n",
        c.found);
  else if (!c.across.empty())
    o += fmt::format("Paired across: {}.\n\n", fmt::join(c.across, ", "));
  o += "| scenario | step A | step B | step delta | TFLOPs A | TFLOPs B | TFLOPs delta |\n";
  o += "|---|---:|---:|---:|---:|---:|---:|\n";
  int only_a = 0, only_b = 0;
  for (const auto& r : rows) {
    if (r.a && r.b) {
      // A change that rounds to 0.00% prints as +0.00%, whatever its sign.
      const auto pct = [](double d) { return std::abs(d) < 0.005 ? 0.0 : d; };
      o += fmt::format("| {} | {} | {} | {:+.2f}% | {:.2f} | {:.2f} | {:+.2f}% |\n",
                       md_cell(r.label), format_time(r.a->step_time_s),
                       format_time(r.b->step_time_s), pct(r.step_delta_pct()), r.a->tflops_per_gpu,
                       r.b->tflops_per_gpu, pct(r.tflops_delta_pct()));
    } else if (r.a) {
      ++only_a;
      o += fmt::format("| {} | {} | only in A | | {:.2f} | | |\n", md_cell(r.label),
                       format_time(r.a->step_time_s), r.a->tflops_per_gpu);
    } else {
      ++only_b;
      o += fmt::format("| {} | only in B | {} | | | {:.2f} | |\n", md_cell(r.label),
                       format_time(r.b->step_time_s), r.b->tflops_per_gpu);
    }
  }
  o += fmt::format("\n{} matched, {} only in A, {} only in B\n", rows.size() - only_a - only_b,
                   only_a, only_b);
  return o;
}

}  // namespace zerosim::report
