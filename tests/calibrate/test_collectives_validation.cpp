// Held-out check of the fitted NCCL collective model on real logs (experiment (a) of
// scripts/collectives_validation.py, reports/collectives-validation.md): fit on the H100 cluster's
// 10 x 1, 10 x 8, 1 x 8, 2 x 1 and 2 x 8 nccl-tests logs (send_recv left out: zerosim prices it at
// the full NIC rate, nccl-tests' sendrecv ring runs at half at >= 10 ranks), then predict the
// 10 nodes x 2 GPUs log the fit never saw: every predicted busbw (32 MiB-16 GiB) within 10%, the
// issue's target, and the fit's own mean error within 10%. The default Cauchy loss is what holds
// it: with least squares the 10 x 8 log's 32-512 MiB rows (twice the time the model gives them at
// any parameters) pull the ring latency up and the 10 x 2 prediction to 10.5-11.6% at 32-256 MiB.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/fit/collective_fit.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/profile/cost_profile.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using namespace zerosim::calib;

namespace {

const std::string kDir =
    std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/real/h100-10nodes/";
const char* const kCluster = "h100-ndr-rail-10n";

std::vector<CollectiveRecord> load_without_send_recv(const std::string& name) {
  NcclTestsLog log = load_nccl_tests(kDir + name, NcclTestsOptions{});
  std::vector<CollectiveRecord> out;
  for (const CollectiveRecord& r : log.records)
    if (r.op != "send_recv") out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("fit on the H100 logs predicts the held-out 10 x 2 log within 10% at every size") {
  std::vector<CollectiveRecord> train;
  for (const char* f :
       {"nccl_N10_G1.log", "nccl_N10_G8.log", "nccl_N1_G8_cnode3-002.log",
        "nccl_N2_G1_cnode3-002_cnode3-003.log", "nccl_N2_G8_cnode3-002_cnode3-003.log"}) {
    std::vector<CollectiveRecord> r = load_without_send_recv(f);
    REQUIRE_FALSE(r.empty());
    train.insert(train.end(), r.begin(), r.end());
  }
  CostProfile base = select_cost_profile_for_gpu("dgx-h100", "");
  base.nccl.version = "2.29";
  base.nccl.version_code = nccl_version_code("2.29");
  const CollectiveFit fit = fit_collectives(train, base, kCluster);
  MESSAGE("fit: " << train.size() << " records, mean |error| " << fit.mean_abs_rel_err * 100
                  << "%, worst " << fit.worst_abs_rel_err * 100 << "%");
  CHECK(fit.mean_abs_rel_err <= 0.10);

  const std::vector<CollectiveRecord> held_out = load_without_send_recv("nccl_N10_G2.log");
  int checked = 0;
  for (const CollectiveRecord& r : held_out) {
    REQUIRE(r.nodes == 10);
    REQUIRE(r.gpus_per_node == 2);
    const double predicted = predict_record(r, kCluster, fit.profile);
    // busbw is bytes x bus factor / time: its relative error is measured / predicted time - 1.
    const double busbw_err = r.time_s / predicted - 1;
    INFO(r.op << " " << r.bytes << " B: measured busbw " << r.busbw_GBps << " GB/s, predicted "
              << r.busbw_GBps * (1 + busbw_err) << " GB/s (" << busbw_err * 100 << "%)");
    CHECK(std::fabs(busbw_err) <= 0.10);
    ++checked;
  }
  CHECK(checked == 4 * 10);  // all_reduce, all_gather, reduce_scatter, alltoall at 32 MiB..16 GiB
}

TEST_CASE("the Azure H200 node's NVLS all_reduce curve is fitted within 5% with NCCL's chunks") {
  // Experiment (c) of the report: the log alone, least squares (its target is the fit's own
  // error). NVLS runs from 1 MiB. Its time from 256 MiB to 4 GiB is one line at 274.7 GB/s whose
  // intercept doubles where NCCL's chunk doubles (1 GiB): the fill of NVLS's three-stage pipeline,
  // (k + 2) / k over each worker's k chunks. Without the fill the fit leaves 16 MiB 9.4% off.
  const NcclTestsLog log = load_nccl_tests(std::string(ZEROSIM_SOURCE_DIR) +
                                               "/tests/calibrate/data/real/azure-1node/"
                                               "nccl-tests-h200-allreduce-train.log",
                                           NcclTestsOptions{});
  REQUIRE(log.records.size() == 12);
  CostProfile base = select_cost_profile_for_gpu("dgx-h200", "");
  base.nccl.version = "2.20";
  base.nccl.version_code = nccl_version_code("2.20");
  const CollectiveFit fit =
      fit_collectives(log.records, base, "azure-nd-h200-v5", CollectiveLoss::Squared);
  for (const CollectiveRecord& r : log.records) {
    const double busbw_err = r.time_s / predict_record(r, "azure-nd-h200-v5", fit.profile) - 1;
    INFO(r.bytes << " B: busbw error " << busbw_err * 100 << "%");
    CHECK(std::fabs(busbw_err) <= 0.05);
  }
}

TEST_CASE(
    "the Azure A100 node's all_reduce log is fitted within 5%, its small rows by 8 launches") {
  // Experiment (c): the log was run by one thread driving the node's 8 GPUs (nThread 1 nGpus 8),
  // so from 1 KiB to 256 KiB every call takes the thread's 8 kernel launches (42-45 us). With that
  // floor NCCL's own LL constants meet the 1 MiB row; without it the fit put LL at 1.93 times
  // NCCL's bandwidth and left 1 MiB 11.8% off.
  const NcclTestsLog log = load_nccl_tests(std::string(ZEROSIM_SOURCE_DIR) +
                                               "/tests/calibrate/data/real/azure-1node/"
                                               "nccl-tests-a100-allreduce-train.log",
                                           NcclTestsOptions{});
  REQUIRE(log.records.size() == 12);
  for (const CollectiveRecord& r : log.records) REQUIRE(r.gpus_per_thread == 8);
  CostProfile base = select_cost_profile_for_gpu("dgx-a100", "");
  base.nccl.version = "2.18";
  base.nccl.version_code = nccl_version_code("2.18");
  base.nccl.host_launch_s = 0;
  const CollectiveFit fit =
      fit_collectives(log.records, base, "azure-nd-a100-v4", CollectiveLoss::Squared);
  // The floor: 8 launches between the log's flat rows, 42.2 and 45.4 us.
  CHECK(8 * fit.profile.nccl.host_launch_s >= 42.2e-6 * 0.97);
  CHECK(8 * fit.profile.nccl.host_launch_s <= 45.4e-6 * 1.03);
  // LL inside the node at NCCL's assumed rate (its tuner's 1/4 of the link), within 10%.
  CHECK(std::fabs(fit.profile.nccl.ll_intra_efficiency - 1) <= 0.10);
  for (const CollectiveRecord& r : log.records) {
    const double busbw_err = r.time_s / predict_record(r, "azure-nd-a100-v4", fit.profile) - 1;
    INFO(r.bytes << " B: busbw error " << busbw_err * 100 << "%");
    CHECK(std::fabs(busbw_err) <= 0.05);
  }
}

TEST_CASE("the 256-node Polaris ring all_gather runs at the slow step the 8-node log shows") {
  // The report's "two paces" finding: the 8-node (2.18, one rack) all_gather's ring/LL rows at
  // 512 B-32 KiB run either ~1.5-3 us or ~7.5-8 us per step; the 256-node ring (2.21, 19 racks)
  // runs the slow step at every size. The slowest step of the 8-node log (both columns, after the
  // same 12 us fixed part as the report) as the ring-step floor (nccl.group_step_s, which applies
  // beyond group_nodes) puts the shipped, otherwise unfitted polaris-a100 within the issue's
  // targets at 16 KiB-8 MiB (25% from 1 MiB, 50% below); without it the rows are 2-3x too fast.
  const std::string dir =
      std::string(ZEROSIM_SOURCE_DIR) + "/tests/calibrate/data/real/a100-polaris/";
  double slow_step_s = 0;
  for (bool in_place : {false, true}) {
    NcclTestsOptions o;
    o.in_place = in_place;
    const NcclTestsLog small =
        load_nccl_tests(dir + "nccl_2_18__n8.g4.2024-04-29-18-14-00__all_gather_output.dat.4", o);
    for (const CollectiveRecord& r : small.records)
      if (r.bytes >= 512 && r.bytes <= 32768)
        slow_step_s = std::max(slow_step_s, (r.time_s - 12e-6) / (r.ranks - 1));
  }
  CHECK(slow_step_s == zerosim::testing::Approx(7.95e-6).epsilon(0.01));
  CostProfile p =
      load_cost_profile(std::string(ZEROSIM_SOURCE_DIR) + "/calibrate/profiles/polaris-a100.json");
  REQUIRE(p.nccl.group_nodes > 0);
  REQUIRE(p.nccl.group_step_s == 0);
  const NcclTestsLog big = load_nccl_tests(
      dir + "nccl_2_21__n256.g4.2024-04-29-19-19-41__all_gather_output.dat.4", NcclTestsOptions{});
  int checked = 0;
  for (const CollectiveRecord& r : big.records) {
    if (r.bytes > (8 << 20)) continue;
    REQUIRE(r.nodes > p.nccl.group_nodes);
    p.nccl.group_step_s = 0;
    CHECK(r.time_s / predict_record(r, "polaris", p) - 1 > 1.0);
    p.nccl.group_step_s = slow_step_s;
    const double busbw_err = r.time_s / predict_record(r, "polaris", p) - 1;
    INFO(r.bytes << " B: busbw error " << busbw_err * 100 << "%");
    CHECK(std::fabs(busbw_err) <= (r.bytes >= (1 << 20) ? 0.25 : 0.50));
    ++checked;
  }
  CHECK(checked == 10);
}

TEST_CASE("each shipped profile states the figure its fabric's shared logs give it, unfitted") {
  // Section d of the report: a shipped profile's provenance.collectives names the shared logs of
  // its GPU and fabric ("checked_against") and the busbw error the profile, as shipped, makes on
  // them ("validation"), which `collective` and `simulate` print. Recomputed here, every size but
  // send_recv, so a model or profile change that moves the figure fails until the profile says so.
  struct Check {
    const char* profile;
    const char* cluster;  // the logs' cluster
    const char* dir;      // under tests/calibrate/data/real/
  };
  const Check checks[] = {{"dgx-h100", "h100-ndr-rail-10n", "h100-10nodes"},
                          {"dgx-a100", "azure-nd-a100-v4", "azure-1node"},
                          {"dgx-h200", "azure-nd-h200-v5", "azure-1node"},
                          {"dgx-h200-measured", "azure-nd-h200-v5", "azure-1node"}};
  const std::string root = std::string(ZEROSIM_SOURCE_DIR);
  for (const Check& c : checks) {
    CAPTURE(c.profile);
    const CostProfile p = load_cost_profile(root + "/calibrate/profiles/" + c.profile + ".json");
    REQUIRE(p.provenance.contains("collectives"));
    const json& stated = p.provenance["collectives"];
    REQUIRE(stated.contains("checked_against"));
    int sizes = 0;
    double sum = 0, worst = 0;
    for (const json& name : stated["checked_against"]) {
      const NcclTestsLog log = load_nccl_tests(
          root + "/tests/calibrate/data/real/" + c.dir + "/" + name.get<std::string>(),
          NcclTestsOptions{});
      for (const CollectiveRecord& r : log.records) {
        if (r.op == "send_recv") continue;
        const double e = std::fabs(r.time_s / predict_record(r, c.cluster, p) - 1);
        sum += e;
        worst = std::max(worst, e);
        ++sizes;
      }
    }
    REQUIRE(sizes > 0);
    char figure[96];
    std::snprintf(figure, sizeof figure, "mean error %.1f%%, worst %.1f%%", 100 * sum / sizes,
                  100 * worst);
    const std::string validation = stated["validation"].get<std::string>();
    INFO("computed: their " << sizes << " sizes, " << figure << "; stated: " << validation);
    CHECK(validation.find("their " + std::to_string(sizes) + " sizes") != std::string::npos);
    CHECK(validation.find(figure) != std::string::npos);
    CHECK(collectives_trust(p).rfind("derived, checked against ", 0) == 0);
  }
}
