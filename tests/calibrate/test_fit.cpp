// Fitting: exact recovery of known alpha/beta from synthetic data (single line, piecewise, kernels, GEMMs
// through fit_profile) and held-out prediction within 10% on a representative nccl-tests curve.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"

using namespace zerosim;
using namespace zerosim::calib;

namespace {

std::vector<double> sizes(int lo_exp, int hi_exp) {
  std::vector<double> x;
  for (int e = lo_exp; e <= hi_exp; ++e) x.push_back(std::ldexp(1.0, e));
  return x;
}

CostProfile base() { return select_cost_profile_for_gpu("dgx-h100", ""); }

}  // namespace

TEST_CASE("fit_relative recovers a line exactly") {
  const double a = 12.5e-6, b = 1.0 / 180e9;
  auto x = sizes(3, 33);
  std::vector<double> t;
  for (double v : x) t.push_back(a + b * v);
  LinearFit f = fit_relative(x, t);
  CHECK(f.a == doctest::Approx(a).epsilon(1e-9));
  CHECK(f.b == doctest::Approx(b).epsilon(1e-9));
  CHECK(f.max_rel_err < 1e-9);
}

TEST_CASE("fit_relative keeps alpha >= 0 and minimizes relative, not absolute, error") {
  // Pure bandwidth data through the origin plus one point slightly below it: the free fit would give a
  // negative intercept; the constrained fit is the line through the origin.
  std::vector<double> x = {1e3, 1e6, 1e9}, t = {0.9e-9 * 1e3, 1e-9 * 1e6, 1e-9 * 1e9};
  LinearFit f = fit_relative(x, t);
  CHECK(f.a >= 0);
  // Relative weighting: a 10x error at the smallest size would dominate; the fit balances relative errors.
  // Two points: exact.
  LinearFit two = fit_relative({100, 200}, {3e-6, 5e-6});
  CHECK(two.a == doctest::Approx(1e-6));
  CHECK(two.b == doctest::Approx(2e-8));
  CHECK_THROWS(fit_relative({}, {}));
  CHECK_THROWS(fit_relative({1}, {0}));
}

TEST_CASE("fit_piecewise recovers two known protocol segments and their crossover") {
  // LL: 5 us + x/10 GB/s up to the crossover; Simple: 20 us + x/100 GB/s after. Time = min of the two,
  // so the lines cross at x* = 15e-6 / (1/10e9 - 1/100e9) = 166666.67 bytes.
  const double a1 = 5e-6, b1 = 1 / 10e9, a2 = 20e-6, b2 = 1 / 100e9;
  auto x = sizes(3, 30);
  std::vector<double> t;
  for (double v : x) t.push_back(std::min(a1 + b1 * v, a2 + b2 * v));
  PiecewiseOptions opt;
  opt.tolerance = 1e-9;
  PiecewiseFit pf = fit_piecewise(x, t, opt);
  REQUIRE(pf.segments.size() == 2);
  CHECK(pf.segments[0].a == doctest::Approx(a1).epsilon(1e-9));
  CHECK(pf.segments[0].b == doctest::Approx(b1).epsilon(1e-9));
  CHECK(pf.segments[1].a == doctest::Approx(a2).epsilon(1e-9));
  CHECK(pf.segments[1].b == doctest::Approx(b2).epsilon(1e-9));
  CHECK(pf.min_bytes[0] == 0);
  CHECK(pf.min_bytes[1] == 166667);  // ceil of the crossover
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(pf.predict(x[i]) == doctest::Approx(t[i]).epsilon(1e-9));
}

TEST_CASE("fit_piecewise uses one segment when one line is within tolerance") {
  auto x = sizes(10, 30);
  std::vector<double> t;
  for (double v : x) t.push_back(30e-6 + v / 50e9);
  PiecewiseFit pf = fit_piecewise(x, t);
  CHECK(pf.segments.size() == 1);
}

TEST_CASE("fit_profile: collectives, kernels and GEMMs from synthetic measurements, exactly") {
  Measurements m;
  m.files.push_back("synthetic");
  m.provenance.push_back(json::object());
  const double alpha = 20e-6, busbw = 200e9;
  const double factor = busbw_factor(CollKind::AllGather, 8);  // 7/8
  for (double x : sizes(10, 32)) {
    CollectiveRecord r;
    r.op = "all_gather";
    r.ranks = 8;
    r.nodes = 1;
    r.tier = "intra_node";
    r.bytes = static_cast<std::uint64_t>(x);
    r.time_s = alpha + factor * x / busbw;
    r.where = "synthetic";
    m.collectives.push_back(r);
  }
  // A smaller group of the same op/tier is fitted and reported but not kept.
  CollectiveRecord small = m.collectives.front();
  small.ranks = 2;
  m.collectives.push_back(small);
  for (double x : sizes(12, 30)) m.kernels.push_back({"quantize_int8", static_cast<std::uint64_t>(x), 7e-6 + x / 2500e9, "s"});
  // GEMMs at 50% and 70% of the H100 profile's peak, in two different half-decade bins.
  const double peak = base().peak_flops;
  GemmRecord g1{1024, 1024, 1024, 0, "bf16", "s"}, g2{8192, 8192, 8192, 0, "bf16", "s"};
  g1.time_s = g1.flops() / (0.5 * peak);
  g2.time_s = g2.flops() / (0.7 * peak);
  m.gemms = {g1, g2};

  FitResult r = fit_profile(m, base(), {});
  const CostProfile& p = r.profile;
  CHECK(p.status == "measured");
  CHECK(p.name == "dgx-h100-measured");
  const CollectiveCurve* c = p.collective("all_gather", "intra_node");
  REQUIRE(c != nullptr);
  CHECK(c->ranks == 8);
  REQUIRE(c->segments.size() == 1);
  CHECK(c->segments[0].alpha_s == doctest::Approx(alpha).epsilon(1e-9));
  CHECK(c->segments[0].busbw_Bps == doctest::Approx(busbw).epsilon(1e-9));
  CHECK(p.kernel("quantize_int8").launch_s == doctest::Approx(7e-6).epsilon(1e-9));
  CHECK(p.kernel("quantize_int8").throughput_Bps == doctest::Approx(2500e9).epsilon(1e-9));
  // Unmeasured kernels keep the base's values.
  CHECK(p.kernel("copy").throughput_Bps == doctest::Approx(base().kernel("copy").throughput_Bps));
  REQUIRE(p.gemm_efficiency.size() == 2);
  CHECK(p.gemm_efficiency[0].first == doctest::Approx(g1.flops()));
  CHECK(p.gemm_efficiency[0].second == doctest::Approx(0.5));
  CHECK(p.gemm_efficiency[1].second == doctest::Approx(0.7));
  for (const auto& pt : r.points) CHECK(std::fabs(pt.rel_err()) < 1e-9);
  // The provenance lists exactly what was fitted.
  CHECK(p.provenance["fitted"] ==
        json::array({"collectives/all_gather/intra_node", "kernels/quantize_int8", "gemm_efficiency"}));
  // The result is a valid profile under the strict parser.
  CHECK_NOTHROW(parse_cost_profile(to_json(p), "fitted.json"));
}

TEST_CASE("fit_profile rejects GEMMs faster than the base peak and empty measurements") {
  Measurements m;
  CHECK_THROWS_AS(fit_profile(m, base(), {}), InputError);
  GemmRecord g{8192, 8192, 8192, 0, "bf16", "meas.jsonl:7"};
  g.time_s = g.flops() / (1.2 * base().peak_flops);
  m.gemms = {g};
  try {
    fit_profile(m, base(), {});
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "meas.jsonl:7");
    CHECK(e.rule().find("peak") != std::string::npos);
  }
}

TEST_CASE("representative DGX A100 all_reduce curve: held-out sizes predicted within 10%") {
  NcclTestsOptions opt;
  opt.op = "all_reduce";
  auto log = load_nccl_tests(std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt", opt);
  REQUIRE(log.records.size() == 31);
  std::vector<double> x, t, hx, ht;
  for (std::size_t i = 0; i < log.records.size(); ++i) {
    auto& r = log.records[i];
    (i % 2 == 0 ? x : hx).push_back(static_cast<double>(r.bytes));
    (i % 2 == 0 ? t : ht).push_back(r.time_s);
  }
  PiecewiseFit pf = fit_piecewise(x, t);
  CHECK(pf.segments.size() >= 2);  // the protocol changes are visible
  double worst = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) {
    double err = std::fabs(pf.predict(hx[i]) - ht[i]) / ht[i];
    CAPTURE(hx[i]);
    CHECK(err < 0.10);
    worst = std::max(worst, err);
  }
  MESSAGE("worst held-out error: " << worst * 100 << "%");
  // Large-message busbw of the last segment is what nccl-tests reports at GiB sizes (about 240 GB/s).
  double busbw = busbw_factor(CollKind::AllReduce, 8) / pf.segments.back().b;
  CHECK(busbw / 1e9 == doctest::Approx(238).epsilon(0.05));
}
