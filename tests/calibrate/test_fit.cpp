// Fitting: exact recovery of known lines (kernels), of collective-model parameters and GEMM
// efficiencies through fit_profile, and held-out prediction on a representative nccl-tests curve.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

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
  CHECK(f.a == zerosim::testing::Approx(a).epsilon(1e-9));
  CHECK(f.b == zerosim::testing::Approx(b).epsilon(1e-9));
  CHECK(f.max_rel_err < 1e-9);
}

TEST_CASE("fit_relative keeps alpha >= 0 and minimizes relative, not absolute, error") {
  // Pure bandwidth data through the origin plus one point slightly below it: the free fit would
  // give a negative intercept; the constrained fit is the line through the origin.
  std::vector<double> x = {1e3, 1e6, 1e9}, t = {0.9e-9 * 1e3, 1e-9 * 1e6, 1e-9 * 1e9};
  LinearFit f = fit_relative(x, t);
  CHECK(f.a >= 0);
  // Relative weighting: a 10x error at the smallest size would dominate; the fit balances relative
  // errors. Two points: exact.
  LinearFit two = fit_relative({100, 200}, {3e-6, 5e-6});
  CHECK(two.a == zerosim::testing::Approx(1e-6));
  CHECK(two.b == zerosim::testing::Approx(2e-8));
  CHECK_THROWS(fit_relative({}, {}));
  CHECK_THROWS(fit_relative({1}, {0}));
}

TEST_CASE("fit_profile: collectives, kernels and GEMMs from synthetic measurements, exactly") {
  Measurements m;
  m.files.push_back("synthetic");
  m.provenance.push_back(json::object());
  // Collectives timed by the model itself under known NVLink parameters, on one DGX H100.
  CostProfile truth = base();
  truth.link_classes.at(LinkClass::NvLink).efficiency = 0.7;
  truth.link_classes.at(LinkClass::NvLink).hop_latency_s = 5e-6;
  truth.nccl.launch_s = 10e-6;
  for (const char* op : {"all_gather", "all_reduce"})
    for (double x : sizes(16, 32)) {
      CollectiveRecord r;
      r.op = op;
      r.ranks = 8;
      r.nodes = 1;
      r.tier = "intra_node";
      r.bytes = static_cast<std::uint64_t>(x);
      r.where = "synthetic";
      r.time_s = predict_record(r, "dgx-h100", truth);
      m.collectives.push_back(r);
    }
  for (double x : sizes(12, 30))
    m.kernels.push_back({"quantize_int8", static_cast<std::uint64_t>(x), 7e-6 + x / 2500e9, "s"});
  // GEMMs at 50% and 70% of the H100 profile's peak, in two different half-decade bins.
  const double peak = base().peak_flops;
  GemmRecord g1{1024, 1024, 1024, 0, "bf16", "s"}, g2{8192, 8192, 8192, 0, "bf16", "s"};
  g1.time_s = g1.flops() / (0.5 * peak);
  g2.time_s = g2.flops() / (0.7 * peak);
  m.gemms = {g1, g2};

  FitOptions opt;
  CHECK_THROWS_AS(fit_profile(m, base(), opt), InputError);  // collectives need --cluster
  opt.cluster = "dgx-h100";
  FitResult r = fit_profile(m, base(), opt);
  const CostProfile& p = r.profile;
  CHECK(p.status == "measured");
  CHECK(p.name == "dgx-h100-measured");
  CHECK(p.link_class(LinkClass::NvLink).efficiency == zerosim::testing::Approx(0.7).epsilon(1e-3));
  CHECK(p.kernel("quantize_int8").launch_s == zerosim::testing::Approx(7e-6).epsilon(1e-9));
  CHECK(p.kernel("quantize_int8").throughput_Bps == zerosim::testing::Approx(2500e9).epsilon(1e-9));
  // Unmeasured kernels keep the base's values.
  CHECK(p.kernel("copy").throughput_Bps ==
        zerosim::testing::Approx(base().kernel("copy").throughput_Bps));
  REQUIRE(p.gemm_efficiency.size() == 2);
  CHECK(p.gemm_efficiency[0].first == zerosim::testing::Approx(g1.flops()));
  CHECK(p.gemm_efficiency[0].second == zerosim::testing::Approx(0.5));
  CHECK(p.gemm_efficiency[1].second == zerosim::testing::Approx(0.7));
  for (const auto& pt : r.points) CHECK(std::fabs(pt.rel_err()) < 1e-3);
  // The provenance lists what was fitted: the informed collective parameters, then the rest.
  const json fitted = p.provenance["fitted"];
  CHECK(std::find(fitted.begin(), fitted.end(), "link_classes/nvlink/efficiency") != fitted.end());
  CHECK(std::find(fitted.begin(), fitted.end(), "link_classes/network/efficiency") ==
        fitted.end());  // one node: no network record
  CHECK(fitted.back() == "gemm_efficiency");
  // The result is a valid profile under the strict parser.
  CHECK_NOTHROW(parse_cost_profile(to_json(p), "fitted.json"));
}

TEST_CASE("fit_profile rejects GEMMs faster than the base peak and empty measurements") {
  Measurements m;
  CHECK_THROWS_AS(fit_profile(m, base(), {}), InputError);
  GemmRecord g{8192, 8192, 8192, 0, "bf16", "meas.jsonl:7"};
  g.time_s = g.flops() / (1.2 * base().peak_flops);
  m.gemms = {g};
  expect_input_error([&] { fit_profile(m, base(), {}); }, "meas.jsonl:7", "/time_s", "peak");
}

TEST_CASE("fit_profile rejects a kernel faster than the HBM peak: cached records, not HBM") {
  Measurements m;
  const double hbm = base().hbm_Bps;
  for (double x : sizes(20, 28))
    m.kernels.push_back({"copy", static_cast<std::uint64_t>(x), 2e-6 + x / (1.05 * hbm), "m:3"});
  expect_input_error([&] { fit_profile(m, base(), {}); }, "m:3", "/time_s", "exceeds the HBM peak");
  // Just under the peak the fit stands.
  for (auto& k : m.kernels) k.time_s = 2e-6 + static_cast<double>(k.bytes) / (0.99 * hbm);
  CHECK(fit_profile(m, base(), {}).profile.kernel("copy").throughput_Bps ==
        zerosim::testing::Approx(0.99 * hbm).epsilon(1e-9));
}

TEST_CASE("fit_profile takes GPU memory from the measured GPUs, the smallest when they differ") {
  Measurements m;
  m.gemms = {GemmRecord{8192, 8192, 8192, 0, "bf16", "meas.jsonl:2"}};
  m.gemms[0].time_s = m.gemms[0].flops() / (0.8 * base().peak_flops);
  m.files = {"a.jsonl", "b.jsonl"};
  m.provenance = json::array({json::object(), json::object()});
  // No GPU records: the base profile's datasheet capacity stays.
  CHECK(fit_profile(m, base(), {}).profile.memory_bytes == base().memory_bytes);
  m.provenance[0]["gpus"] = json::array({{{"memory_bytes", 85520809984ull}}});
  m.provenance[1]["gpus"] =
      json::array({{{"memory_bytes", 85520809984ull}}, {{"memory_bytes", 85000000000ull}}});
  const FitResult r = fit_profile(m, base(), {});
  CHECK(r.profile.memory_bytes == 85000000000ull);
  const json fitted = r.profile.provenance["fitted"];
  CHECK(std::find(fitted.begin(), fitted.end(), "gpu/memory_bytes") != fitted.end());
  CHECK(r.profile.provenance["sources"]["gpu/memory_bytes"].get<std::string>().find("measured: ") ==
        0);
}

TEST_CASE(
    "real Azure ND A100 v4 all_reduce log: the model fitted on half the sizes predicts the rest") {
  // shared/data/nccl-tests/azure-1node (copied to tests/calibrate/data/real): busbw of one 8-GPU
  // node at every other power of 4 from 1 KiB to 4 GiB. Fitted on the 1st, 3rd, ... size.
  NcclTestsOptions opt;
  auto log = load_nccl_tests(
      std::string(ZEROSIM_SOURCE_DIR) +
          "/tests/calibrate/data/real/azure-1node/nccl-tests-a100-allreduce-train.log",
      opt);
  REQUIRE(log.records.size() == 12);
  std::vector<CollectiveRecord> fit_on, held_out;
  for (std::size_t i = 0; i < log.records.size(); ++i)
    (i % 2 == 0 ? fit_on : held_out).push_back(log.records[i]);
  const CostProfile base_a100 = select_cost_profile_for_gpu("dgx-a100", "");
  const CollectiveFit f = fit_collectives(fit_on, base_a100, "azure-nd-a100-v4");
  double mean = 0, worst_large = 0;
  for (const auto& r : held_out) {
    const double err =
        std::fabs(predict_record(r, "azure-nd-a100-v4", f.profile) - r.time_s) / r.time_s;
    CAPTURE(r.bytes);
    mean += err / static_cast<double>(held_out.size());
    if (r.bytes >= (std::uint64_t{64} << 20)) worst_large = std::max(worst_large, err);
  }
  MESSAGE("held-out mean " << mean * 100 << "%, worst from 64 MiB " << worst_large * 100 << "%");
  CHECK(mean < 0.15);
  CHECK(worst_large < 0.10);
  // Large-message busbw is what nccl-tests reports at GiB sizes (230 GB/s).
  const auto& big = log.records.back();
  const double busbw = busbw_factor(CollKind::AllReduce, 8) * static_cast<double>(big.bytes) /
                       predict_record(big, "azure-nd-a100-v4", f.profile);
  CHECK(busbw == zerosim::testing::Approx(big.busbw_GBps * 1e9).epsilon(0.10));
}
