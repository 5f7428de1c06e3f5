#include "calibrate/fit/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "calibrate/fit/collective_fit.hpp"
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

}  // namespace

LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& t) {
  if (x.empty() || x.size() != t.size())
    throw std::invalid_argument("fit_relative: need equally many x and t, at least one");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!(t[i] > 0) || !(x[i] >= 0))
      throw std::invalid_argument("fit_relative: times must be > 0 and sizes >= 0");
  LinearFit f;
  double xmax = *std::max_element(x.begin(), x.end());
  if (x.size() == 1 || xmax == 0) {
    if (xmax > 0)
      f.b = t[0] / x[0];
    else
      f.a = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
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

namespace {

// What the fit changed, for the profile's provenance: a source line per fitted parameter (the base
// profile's for the others) and the fitted parameters' names.
struct FitProvenance {
  json sources;
  json fitted = json::array();
  json collectives;  // what the collective parameters were fitted on, and how well (or null)
};

// Collectives: the NCCL model's parameters, every record simulated on the named cluster.
void fit_collective_records(const Measurements& m, const FitOptions& opt, FitResult& res,
                            FitProvenance& prov) {
  CostProfile& p = res.profile;
  if (opt.cluster.empty())
    throw InputError("<command line>", "--cluster",
                     "required: collective records are fitted by simulating each on the cluster "
                     "they ran on (a preset such as h100-ndr-rail-10n, or a topology file)");
  CollectiveFit cf = fit_collectives(m.collectives, p, opt.cluster, opt.loss, opt.progress);
  const std::string name = p.name, status = p.status;
  p = cf.profile;
  p.name = name;
  p.status = status;
  for (std::size_t i = 0; i < m.collectives.size(); ++i) {
    const CollectiveRecord& r = m.collectives[i];
    res.points.push_back({fmt::format("{} ranks={} nodes={}", r.op, r.ranks, r.nodes), r.where,
                          static_cast<double>(r.bytes), r.time_s, cf.predicted_s[i]});
  }
  for (const CollectiveParam& c : cf.params) {
    res.summary.push_back(fmt::format(
        "{}: {:.4g} (base {:.4g}, range {:g}..{:g}){}{}; sensitivity {:.3g}", c.key, c.value,
        c.base, c.lo, c.hi, c.informed ? "" : ", not informed by these records",
        c.at_bound ? ", AT A BOUND of its range" : "", c.sensitivity));
    if (!c.informed) continue;
    prov.sources[c.key] = fmt::format(
        "measured: fitted by `calibrate fit` on {} collective records (cluster {}), range "
        "{:g}..{:g}",
        m.collectives.size(), opt.cluster, c.lo, c.hi);
    prov.fitted.push_back(c.key);
  }
  for (const ConfoundedPair& c : cf.confounded) {
    res.summary.push_back(fmt::format(
        "confounded: {} and {}: these records determine them only together (correlation of "
        "their estimates {:+.3f}); records of other shapes (node counts, GPUs per node) separate "
        "them",
        c.a, c.b, c.correlation));
    for (const auto* k : {&c.a, &c.b})
      prov.sources[*k] =
          prov.sources[*k].get<std::string>() +
          fmt::format("; determined only together with {} by these records", *k == c.a ? c.b : c.a);
  }
  res.summary.push_back(fmt::format(
      "collectives: {} records on cluster {}, {} loss, {} iterations; mean |error| {:.2f}%, worst "
      "{:.2f}%",
      m.collectives.size(), opt.cluster, collective_loss_name(opt.loss), cf.iterations,
      cf.mean_abs_rel_err * 100, cf.worst_abs_rel_err * 100));
  res.collective_params = cf.params;
  // What `collective` and `simulate` say of this profile's collectives (collectives_trust).
  json files = json::array();
  for (const std::string& f : m.files)
    files.push_back(std::filesystem::path(f).filename().string());
  prov.collectives = {
      {"fitted_on", files},
      {"validation", fmt::format("the fit's own records: {} on cluster {}, mean |time error| "
                                 "{:.1f}%, worst {:.1f}%; not held out",
                                 m.collectives.size(), opt.cluster, cf.mean_abs_rel_err * 100,
                                 cf.worst_abs_rel_err * 100)}};
}

// Kernels: time = launch + bytes / throughput, one fit per kernel name.
void fit_kernel_records(const Measurements& m, FitResult& res, FitProvenance& prov) {
  CostProfile& p = res.profile;
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
      throw InputError(
          recs.front()->where, "/time_s",
          fmt::format("kernel '{}': time does not grow with bytes, no throughput can be fitted",
                      name));
    KernelCost kc{1.0 / f.b, f.a};
    if (kc.throughput_Bps > p.hbm_Bps)
      throw InputError(
          recs.front()->where, "/time_s",
          fmt::format(
              "kernel '{}': fitted throughput {:.4g} GB/s exceeds the HBM peak {:.4g} GB/s; "
              "only data left in cache moves that fast (time kernels cold, as "
              "zerosim-calibrate does)",
              name, kc.throughput_Bps / 1e9, p.hbm_Bps / 1e9));
    p.kernels[name] = kc;
    for (auto* r : recs)
      res.points.push_back({"kernel " + name, r->where, static_cast<double>(r->bytes), r->time_s,
                            kc.launch_s + static_cast<double>(r->bytes) / kc.throughput_Bps});
    res.summary.push_back(fmt::format(
        "kernel {}: {} points, throughput {:.4g} GB/s ({:.2f} of HBM), launch {:.3g} us; "
        "worst error {:.2f}%",
        name, recs.size(), kc.throughput_Bps / 1e9, kc.throughput_Bps / p.hbm_Bps,
        kc.launch_s * 1e6, f.max_rel_err * 100));
    prov.sources["kernels/" + name] =
        fmt::format("measured: {} points, fitted on relative error", recs.size());
    prov.fitted.push_back("kernels/" + name);
  }
}

// The GEMM efficiency curve: efficiency = flops / time / peak, averaged per half decade of FLOPs
// (in log10 FLOPs). A GEMM faster than the base profile's peak is an error (the peak is wrong).
void fit_gemm_curve(const Measurements& m, CostProfile& p) {
  std::map<long, std::pair<double, std::pair<double, int>>>
      bins;  // bin -> (sum log10 f, (sum eff, count))
  for (const auto& g : m.gemms) {
    double eff = g.flops() / g.time_s / p.peak_flops;
    if (eff > 1.0)
      throw InputError(
          g.where, "/time_s",
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
    p.gemm_efficiency.emplace_back(std::pow(10.0, v.first / v.second.second),
                                   v.second.first / v.second.second);
}

// GEMMs: the efficiency curve, then every shape predicted with it.
void fit_gemm_records(const Measurements& m, FitResult& res, FitProvenance& prov) {
  CostProfile& p = res.profile;
  fit_gemm_curve(m, p);
  double worst = 0;
  for (const auto& g : m.gemms) {
    double pred = g.flops() / (p.gemm_efficiency_at(g.flops()) * p.peak_flops);
    PointReport pr{fmt::format("gemm {}x{}x{}", g.m, g.n, g.k), g.where, g.flops(), g.time_s, pred};
    worst = std::max(worst, std::fabs(pr.rel_err()));
    res.points.push_back(pr);
  }
  res.summary.push_back(
      fmt::format("gemm efficiency: {} shapes -> {} curve points (half-decade bins), efficiency "
                  "{:.3f}..{:.3f}; worst error {:.2f}%",
                  m.gemms.size(), p.gemm_efficiency.size(), p.gemm_efficiency.front().second,
                  p.gemm_efficiency.back().second, worst * 100));
  prov.sources["gemm_efficiency"] =
      fmt::format("measured: {} GEMM shapes, averaged per half decade of FLOPs", m.gemms.size());
  prov.fitted.push_back("gemm_efficiency");
}

// The measured profile's provenance: its base, what was fitted, from which files and command.
json provenance_of(const Measurements& m, const CostProfile& base, const FitOptions& opt,
                   const FitProvenance& fit) {
  json prov = json::object();
  prov["status"] = "measured";
  prov["base_profile"] = base.name;
  prov["base_status"] = base.status;
  prov["fitted"] = fit.fitted;
  prov["note"] = "parameters not listed in 'fitted' keep the base profile's values and sources";
  prov["measurements"] = json::array();
  for (std::size_t i = 0; i < m.files.size(); ++i)
    prov["measurements"].push_back({{"file", m.files[i]}, {"provenance", m.provenance[i]}});
  if (!opt.command.empty()) prov["command"] = opt.command;
  if (!m.collectives.empty()) prov["collective_loss"] = collective_loss_name(opt.loss);
  if (!fit.collectives.is_null()) prov["collectives"] = fit.collectives;
  prov["sources"] = fit.sources;
  return prov;
}

// GPU memory: the capacity the CUDA runtime reported for the GPUs that were measured (the smallest,
// should they differ), which datasheets round ("141 GB").
void fit_memory_capacity(const Measurements& m, FitResult& res, FitProvenance& prov) {
  std::uint64_t smallest = 0;
  std::size_t gpus = 0;
  for (const json& pv : m.provenance) {
    if (!pv.contains("gpus") || !pv["gpus"].is_array()) continue;
    for (const json& g : pv["gpus"]) {
      if (!g.contains("memory_bytes") || !g["memory_bytes"].is_number_unsigned()) continue;
      const auto bytes = g["memory_bytes"].get<std::uint64_t>();
      smallest = gpus == 0 ? bytes : std::min(smallest, bytes);
      ++gpus;
    }
  }
  if (gpus == 0) return;
  res.profile.memory_bytes = smallest;
  prov.sources["gpu/memory_bytes"] =
      fmt::format("measured: the CUDA runtime's total memory of the measured GPU{} ({} bytes{})",
                  gpus > 1 ? "s" : "", smallest, gpus > 1 ? ", the smallest" : "");
  prov.fitted.push_back("gpu/memory_bytes");
  res.summary.push_back(fmt::format("gpu memory: {} bytes ({:.2f} GiB), from {} GPU record{}",
                                    smallest, static_cast<double>(smallest) / (1ull << 30), gpus,
                                    gpus > 1 ? "s" : ""));
}

}  // namespace

FitResult fit_profile(const Measurements& m, const CostProfile& base, const FitOptions& opt) {
  if (m.collectives.empty() && m.kernels.empty() && m.gemms.empty())
    throw InputError("<measurements>", "",
                     "no records to fit (the measurement files hold only headers)");
  FitResult res;
  CostProfile& p = res.profile;
  p = base;
  p.name = opt.name.empty() ? base.name + "-measured" : opt.name;
  p.status = "measured";
  FitProvenance prov;
  prov.sources = base.provenance.contains("sources") ? base.provenance["sources"] : json::object();
  if (!m.collectives.empty()) fit_collective_records(m, opt, res, prov);
  fit_kernel_records(m, res, prov);
  if (!m.gemms.empty()) fit_gemm_records(m, res, prov);
  fit_memory_capacity(m, res, prov);
  p.provenance = provenance_of(m, base, opt, prov);
  return res;
}

}  // namespace zerosim::calib
