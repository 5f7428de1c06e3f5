#include "sim/report/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/tables.hpp"

namespace zerosim::report {

namespace {

// A result's scenario without the ignored keys, as matching text.
std::string match_key(const ResultView& r, const std::vector<std::string>& by) {
  if (by.empty()) return r.identity;
  json sc = json::parse(r.identity);
  for (const std::string& k : by) sc.erase(k);
  return sc.dump();
}

std::vector<CompareRow> match(const std::vector<ResultView>& a, const std::vector<ResultView>& b,
                              const std::vector<std::string>& by) {
  std::map<std::string, const ResultView*> in_b;
  for (const auto& r : b) in_b.emplace(match_key(r, by), &r);  // first occurrence wins
  std::map<std::string, bool> used;
  std::vector<CompareRow> rows;
  for (const auto& r : a) {
    CompareRow row{r.label(), &r, nullptr};
    const std::string key = match_key(r, by);
    auto it = in_b.find(key);
    if (it != in_b.end() && !used[key]) {
      row.b = it->second;
      used[key] = true;
    }
    rows.push_back(row);
  }
  for (const auto& r : b) {
    const std::string key = match_key(r, by);
    if (!used[key]) {
      rows.push_back({r.label(), nullptr, &r});
      used[key] = true;
    }
  }
  return rows;
}

// The value of scenario key k if every result of rs has the same one, else null.
json constant_value(const std::vector<ResultView>& rs, const std::string& k) {
  json value;
  for (const ResultView& r : rs) {
    const json sc = json::parse(r.identity);
    const json v = sc.contains(k) ? sc.at(k) : json();
    if (&r == &rs.front())
      value = v;
    else if (v != value)
      return json();
  }
  return value;
}

}  // namespace

Comparison compare_results(const std::vector<ResultView>& a, const std::vector<ResultView>& b,
                           const std::vector<std::string>& by) {
  if (!a.empty()) {
    const json keys = json::parse(a.front().identity);
    for (const std::string& k : by)
      if (!keys.contains(k)) {
        std::vector<std::string> known;
        for (const auto& [name, unused] : keys.items()) known.push_back(name);
        throw flag_error("--by", fmt::format("'{}' is not a scenario key (known: {})", k,
                                             fmt::join(known, ", ")));
      }
  }
  Comparison c;
  c.ignored = by;
  c.rows = match(a, b, by);
  const bool none =
      std::none_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) { return r.a && r.b; });
  if (!by.empty() || !none || a.empty() || b.empty()) return c;
  // Nothing matched: leave out the keys each file holds constant but the two set differently.
  std::vector<std::string> found;
  std::string what;
  const json first = json::parse(a.front().identity);
  for (const auto& [k, unused] : first.items()) {
    const json va = constant_value(a, k), vb = constant_value(b, k);
    if (va.is_null() || vb.is_null() || va == vb) continue;
    found.push_back(k);
    what += fmt::format("{}{}: {} vs {}", what.empty() ? "" : "; ", k, va.dump(), vb.dump());
  }
  if (found.empty()) return c;
  std::vector<CompareRow> rows = match(a, b, found);
  if (std::none_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.a && r.b; }))
    return c;
  c.rows = std::move(rows);
  c.ignored = std::move(found);
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
  else if (!c.ignored.empty())
    o += fmt::format("Paired across: {}.\n\n", fmt::join(c.ignored, ", "));
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
