#include "calibrate/fit/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"

namespace zerosim::calib {

namespace {

void finish(LinearFit& f, const std::vector<double>& x, const std::vector<double>& t) {
  f.sse = 0;
  f.max_rel_err = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double r = (f.a + f.b * x[i] - t[i]) / t[i];
    f.sse += r * r;
    f.max_rel_err = std::max(f.max_rel_err, std::fabs(r));
  }
}

// A fitted line over points [i, j) of sorted arrays.
LinearFit fit_range(const std::vector<double>& x, const std::vector<double>& t, std::size_t i, std::size_t j) {
  return fit_relative(std::vector<double>(x.begin() + i, x.begin() + j), std::vector<double>(t.begin() + i, t.begin() + j));
}

}  // namespace

LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& t) {
  if (x.empty() || x.size() != t.size()) throw std::invalid_argument("fit_relative: need equally many x and t, at least one");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!(t[i] > 0) || !(x[i] >= 0)) throw std::invalid_argument("fit_relative: times must be > 0 and sizes >= 0");
  LinearFit f;
  double xmax = *std::max_element(x.begin(), x.end());
  if (x.size() == 1 || xmax == 0) {
    if (xmax > 0) f.b = t[0] / x[0];
    else f.a = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
    finish(f, x, t);
    return f;
  }
  // Weighted normal equations with w = 1/t^2, x scaled to [0, 1] for conditioning.
  double S = 0, Su = 0, Suu = 0, St = 0, Sut = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double w = 1.0 / (t[i] * t[i]), u = x[i] / xmax;
    S += w;
    Su += w * u;
    Suu += w * u * u;
    St += w * t[i];
    Sut += w * u * t[i];
  }
  double det = S * Suu - Su * Su;
  double a = 0, bu = 0;
  if (det > 1e-12 * S * Suu) {
    a = (St * Suu - Su * Sut) / det;
    bu = (S * Sut - Su * St) / det;
  } else {
    a = -1;  // all x equal: force the constrained branches below
  }
  if (a < 0 || bu < 0) {
    // Best of the two boundary solutions: through the origin (a = 0) or flat (b = 0).
    LinearFit through{0, Suu > 0 ? Sut / Suu / xmax : 0, 0, 0};
    LinearFit flat{St / S, 0, 0, 0};
    finish(through, x, t);
    finish(flat, x, t);
    return through.sse <= flat.sse ? through : flat;
  }
  f.a = a;
  f.b = bu / xmax;
  finish(f, x, t);
  return f;
}

double PiecewiseFit::predict(double x) const {
  std::size_t s = 0;
  for (std::size_t i = 0; i < min_bytes.size(); ++i)
    if (x >= static_cast<double>(min_bytes[i])) s = i;
  return segments[s].a + segments[s].b * x;
}

PiecewiseFit fit_piecewise(const std::vector<double>& x_in, const std::vector<double>& t_in,
                           const PiecewiseOptions& opt) {
  std::vector<std::size_t> order(x_in.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return x_in[a] < x_in[b]; });
  std::vector<double> x, t;
  for (auto i : order) {
    x.push_back(x_in[i]);
    t.push_back(t_in[i]);
  }
  const std::size_t n = x.size();
  const std::size_t minp = static_cast<std::size_t>(std::max(1, opt.min_points));
  PiecewiseFit single{{0}, {fit_relative(x, t)}};
  if (opt.max_segments <= 1 || n < 2 * minp) return single;

  // cost[i][j]: SSE of one segment over [i, j); infinite when the segment is too short or splits equal x.
  const double inf = std::numeric_limits<double>::infinity();
  auto can_start = [&](std::size_t i) { return i == 0 || x[i - 1] < x[i]; };
  std::vector<std::vector<LinearFit>> fits(n + 1, std::vector<LinearFit>(n + 1));
  std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, inf));
  for (std::size_t i = 0; i < n; ++i) {
    if (!can_start(i)) continue;
    for (std::size_t j = i + minp; j <= n; ++j) {
      if (j < n && !can_start(j)) continue;
      fits[i][j] = fit_range(x, t, i, j);
      cost[i][j] = fits[i][j].sse;
    }
  }
  // best[k][j]: min SSE of k segments covering [0, j); from[k][j]: start of the last one.
  const std::size_t K = static_cast<std::size_t>(opt.max_segments);
  std::vector<std::vector<double>> best(K + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> from(K + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  PiecewiseFit lowest = single;
  double lowest_sse = single.segments[0].sse;
  for (std::size_t k = 1; k <= K; ++k) {
    for (std::size_t j = 1; j <= n; ++j)
      for (std::size_t i = 0; i < j; ++i)
        if (best[k - 1][i] + cost[i][j] < best[k][j]) {
          best[k][j] = best[k - 1][i] + cost[i][j];
          from[k][j] = i;
        }
    if (best[k][n] == inf) break;
    // Recover the segmentation.
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    for (std::size_t kk = k, j = n; kk > 0; --kk) {
      std::size_t i = from[kk][j];
      ranges.emplace_back(i, j);
      j = i;
    }
    std::reverse(ranges.begin(), ranges.end());
    PiecewiseFit pf;
    double worst = 0;
    for (std::size_t s = 0; s < ranges.size(); ++s) {
      auto [i, j] = ranges[s];
      const LinearFit& f = fits[i][j];
      worst = std::max(worst, f.max_rel_err);
      if (s == 0) {
        pf.min_bytes.push_back(0);
      } else {
        // Break where the two lines cross if that lies between the neighbouring sizes, else at the
        // geometric mean of the two sizes.
        const LinearFit& p = pf.segments.back();
        double lo = x[i - 1], hi = x[i];
        double cross = (p.b != f.b) ? (f.a - p.a) / (p.b - f.b) : -1;
        double at = (cross > lo && cross <= hi) ? cross : std::sqrt(std::max(lo, 1.0) * hi);
        pf.min_bytes.push_back(static_cast<std::uint64_t>(std::ceil(at)));
      }
      pf.segments.push_back(f);
    }
    if (worst <= opt.tolerance) return pf;
    if (best[k][n] < lowest_sse) {
      lowest_sse = best[k][n];
      lowest = pf;
    }
  }
  return lowest;
}

FitResult fit_profile(const Measurements& m, const CostProfile& base, const FitOptions& opt) {
  if (m.collectives.empty() && m.kernels.empty() && m.gemms.empty())
    throw InputError("<measurements>", "", "no records to fit (the measurement files hold only headers)");
  FitResult res;
  CostProfile& p = res.profile;
  p = base;
  p.name = opt.name.empty() ? base.name + "-measured" : opt.name;
  p.status = "measured";
  json sources = base.provenance.contains("sources") ? base.provenance["sources"] : json::object();
  json fitted = json::array();

  // --- collectives: one piecewise fit per (op, tier, ranks, nodes); the profile keeps, per op/tier, the
  // group with the most ranks (then the most nodes): the full-node or full-cluster collective.
  using Key = std::tuple<std::string, std::string, int, int>;
  std::map<Key, std::vector<const CollectiveRecord*>> groups;
  for (const auto& c : m.collectives) groups[{c.op, c.tier, c.ranks, c.nodes}].push_back(&c);
  std::map<std::string, Key> chosen;
  for (const auto& [key, recs] : groups) {
    const auto& [op, tier, ranks, nodes] = key;
    std::string k = op + "/" + tier;
    auto it = chosen.find(k);
    if (it == chosen.end() || std::tie(ranks, nodes) > std::tie(std::get<2>(it->second), std::get<3>(it->second)))
      chosen[k] = key;
  }
  for (const auto& [key, recs] : groups) {
    const auto& [op, tier, ranks, nodes] = key;
    std::vector<double> x, t;
    for (auto* r : recs) {
      x.push_back(static_cast<double>(r->bytes));
      t.push_back(r->time_s);
    }
    PiecewiseFit pf = fit_piecewise(x, t, opt.piecewise);
    double factor = busbw_factor(parse_coll_kind(op, "op"), ranks);
    CollectiveCurve curve;
    curve.ranks = ranks;
    std::string segs;
    for (std::size_t s = 0; s < pf.segments.size(); ++s) {
      double busbw = pf.segments[s].b > 0 ? std::min(kMaxBusbwBps, factor / pf.segments[s].b) : kMaxBusbwBps;
      curve.segments.push_back({pf.min_bytes[s], pf.segments[s].a, busbw});
      segs += fmt::format("{}[from {} B: alpha {:.3g} us, busbw {:.4g} GB/s]", s ? " " : "", pf.min_bytes[s],
                          pf.segments[s].a * 1e6, busbw / 1e9);
    }
    std::string what = fmt::format("{}/{} ranks={} nodes={}", op, tier, ranks, nodes);
    double worst = 0;
    for (auto* r : recs) {
      PointReport pr{what, r->where, static_cast<double>(r->bytes), r->time_s,
                     curve.time(factor, static_cast<double>(r->bytes))};
      worst = std::max(worst, std::fabs(pr.rel_err()));
      res.points.push_back(pr);
    }
    bool kept = chosen[op + "/" + tier] == key;
    res.summary.push_back(fmt::format("collective {}: {} points, {} segment(s) {}; worst error {:.2f}%{}", what,
                                      recs.size(), pf.segments.size(), segs, worst * 100,
                                      kept ? "" : " (not kept: a larger group of this op/tier is)"));
    if (kept) {
      p.collectives[op + "/" + tier] = curve;
      sources["collectives/" + op + "/" + tier] =
          fmt::format("measured: {} points, ranks={} nodes={}, fitted on relative error", recs.size(), ranks, nodes);
      fitted.push_back("collectives/" + op + "/" + tier);
    }
  }

  // --- kernels: time = launch + bytes / throughput.
  std::map<std::string, std::vector<const KernelRecord*>> kgroups;
  for (const auto& k : m.kernels) kgroups[k.name].push_back(&k);
  for (const auto& [name, recs] : kgroups) {
    std::vector<double> x, t;
    for (auto* r : recs) {
      x.push_back(static_cast<double>(r->bytes));
      t.push_back(r->time_s);
    }
    LinearFit f = fit_relative(x, t);
    if (!(f.b > 0))
      throw InputError(recs.front()->where, "/time_s",
                       fmt::format("kernel '{}': time does not grow with bytes, no throughput can be fitted", name));
    KernelCost kc{1.0 / f.b, f.a};
    p.kernels[name] = kc;
    for (auto* r : recs)
      res.points.push_back({"kernel " + name, r->where, static_cast<double>(r->bytes), r->time_s,
                            kc.launch_s + static_cast<double>(r->bytes) / kc.throughput_Bps});
    res.summary.push_back(fmt::format("kernel {}: {} points, throughput {:.4g} GB/s ({:.2f} of HBM), launch {:.3g} us; "
                                      "worst error {:.2f}%",
                                      name, recs.size(), kc.throughput_Bps / 1e9, kc.throughput_Bps / p.hbm_Bps,
                                      kc.launch_s * 1e6, f.max_rel_err * 100));
    sources["kernels/" + name] = fmt::format("measured: {} points, fitted on relative error", recs.size());
    fitted.push_back("kernels/" + name);
  }

  // --- GEMMs: efficiency = flops / time / peak, averaged per half decade of FLOPs (in log10 FLOPs).
  if (!m.gemms.empty()) {
    std::map<long, std::pair<double, std::pair<double, int>>> bins;  // bin -> (sum log10 f, (sum eff, count))
    for (const auto& g : m.gemms) {
      double eff = g.flops() / g.time_s / p.peak_flops;
      if (eff > 1.0)
        throw InputError(g.where, "/time_s",
                         fmt::format("GEMM {}x{}x{} ran at {:.3g} of the base profile's peak ({:.4g} TFLOPS): the "
                                     "peak is wrong for this GPU; pass --base with the right profile",
                                     g.m, g.n, g.k, eff, p.peak_flops / 1e12));
      double lf = std::log10(g.flops());
      auto& b = bins[static_cast<long>(std::floor(2 * lf))];
      b.first += lf;
      b.second.first += eff;
      b.second.second += 1;
    }
    p.gemm_efficiency.clear();
    for (const auto& [bin, v] : bins)
      p.gemm_efficiency.emplace_back(std::pow(10.0, v.first / v.second.second), v.second.first / v.second.second);
    double worst = 0;
    for (const auto& g : m.gemms) {
      double pred = g.flops() / (p.gemm_efficiency_at(g.flops()) * p.peak_flops);
      PointReport pr{fmt::format("gemm {}x{}x{}", g.m, g.n, g.k), g.where, g.flops(), g.time_s, pred};
      worst = std::max(worst, std::fabs(pr.rel_err()));
      res.points.push_back(pr);
    }
    res.summary.push_back(fmt::format("gemm efficiency: {} shapes -> {} curve points (half-decade bins), efficiency "
                                      "{:.3f}..{:.3f}; worst error {:.2f}%",
                                      m.gemms.size(), p.gemm_efficiency.size(), p.gemm_efficiency.front().second,
                                      p.gemm_efficiency.back().second, worst * 100));
    sources["gemm_efficiency"] = fmt::format("measured: {} GEMM shapes, averaged per half decade of FLOPs", m.gemms.size());
    fitted.push_back("gemm_efficiency");
  }

  json prov = json::object();
  prov["status"] = "measured";
  prov["base_profile"] = base.name;
  prov["base_status"] = base.status;
  prov["fitted"] = fitted;
  prov["note"] = "parameters not listed in 'fitted' keep the base profile's values and sources";
  prov["measurements"] = json::array();
  for (std::size_t i = 0; i < m.files.size(); ++i)
    prov["measurements"].push_back({{"file", m.files[i]}, {"provenance", m.provenance[i]}});
  if (!opt.command.empty()) prov["command"] = opt.command;
  prov["sources"] = sources;
  p.provenance = prov;
  return res;
}

}  // namespace zerosim::calib
