// Scaling charts (sim/report/scaling.hpp): results that differ only in their node count form one
// series per strategy; the efficiency is tokens/s per GPU over that of the smallest cluster; a
// nodes sweep's report draws throughput and efficiency against GPUs instead of one bar chart per
// node count, and its Markdown lists the efficiencies.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "sim/report/html.hpp"
#include "sim/report/scaling.hpp"
#include "sim/report/tables.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim::report;

namespace {

ResultView row(int nodes, const std::string& strategy, double tokens_per_s) {
  ResultView r;
  r.cluster = "dgx-h100";
  r.model = "llama-2-7b";
  r.strategy = strategy;
  r.tier = "analytic";
  r.profile = "dgx-h100";
  r.fabric = "rail";
  r.nodes = nodes;
  r.gpus = 8 * nodes;
  r.nics_per_node = 8;
  r.nic_gbps = 400;
  r.tokens_per_gpu = 4096;
  r.seq_len = 4096;
  r.tokens_per_s = tokens_per_s;
  r.step_time_s = 8.0 * nodes * 4096 / tokens_per_s;
  r.tflops_per_gpu = 100;
  return r;
}

std::vector<ResultView> nodes_sweep() {
  return {row(1, "zero3", 80000),   row(1, "zeropp", 80000), row(2, "zero3", 144000),
          row(2, "zeropp", 156000), row(4, "zero3", 256000), row(4, "zeropp", 304000)};
}

}  // namespace

TEST_CASE("a nodes sweep is one scaling series per strategy") {
  const std::vector<ResultView> rs = nodes_sweep();
  const std::vector<AxisGroup> g = scaling_groups(rs);
  REQUIRE(g.size() == 1u);
  CHECK(g[0].xs == std::vector<double>{8, 16, 32});
  CHECK(g[0].rows.size() == 6u);
  // 144000 / 16 over 80000 / 8, and so on.
  CHECK(scaling_efficiency(g[0], rs[2]) == zerosim::testing::Approx(0.9));
  CHECK(scaling_efficiency(g[0], rs[3]) == zerosim::testing::Approx(0.975));
  CHECK(scaling_efficiency(g[0], rs[5]) == zerosim::testing::Approx(0.95));
  CHECK(scaling_efficiency(g[0], rs[0]) == 1.0);
}

TEST_CASE("results at one node count, or differing in more than nodes, form no series") {
  std::vector<ResultView> rs = {row(2, "zero3", 1), row(2, "zeropp", 2)};
  CHECK(scaling_groups(rs).empty());
  rs = {row(1, "zero3", 1), row(2, "zero3", 2)};
  rs[1].tokens_per_gpu = 8192;  // another batch: not the same experiment
  CHECK(scaling_groups(rs).empty());
  rs[1].tokens_per_gpu = 4096;
  rs[1].nic_gbps = 200;  // another network per node
  CHECK(scaling_groups(rs).empty());
}

TEST_CASE("the efficiency is NaN without the strategy's smallest-cluster result") {
  const std::vector<ResultView> rs = {row(1, "zero3", 80000), row(2, "zero3", 144000),
                                      row(2, "zeropp", 156000)};
  const std::vector<AxisGroup> g = scaling_groups(rs);
  REQUIRE(g.size() == 1u);
  CHECK(std::isnan(scaling_efficiency(g[0], rs[2])));
}

TEST_CASE("a nodes sweep's report draws against GPUs, not one bar chart per node count") {
  const std::vector<ResultView> rs = nodes_sweep();
  const std::string html = render_html(rs, "nodes.json");
  CHECK(html.find("Scaling with cluster size") != std::string::npos);
  CHECK(html.find("Throughput vs GPUs") != std::string::npos);
  CHECK(html.find("Scaling efficiency") != std::string::npos);
  CHECK(html.find("Throughput vs network bandwidth") == std::string::npos);
  const std::string md = render_markdown(rs, "nodes.json");
  CHECK(md.find("| 16 | ZeRO++ | 156000 | 9750.0 | 0.97 | yes |") != std::string::npos);
  CHECK(md.find("| 32 | ZeRO-3 | 256000 | 8000.0 | 0.80 | yes |") != std::string::npos);
}

TEST_CASE("the x axis is chosen from what varies") {
  const auto sweep = [](const std::vector<int>& nodes, const std::vector<int>& tokens,
                        const std::vector<double>& gbps) {
    std::vector<ResultView> rs;
    for (int n : nodes)
      for (int t : tokens)
        for (double g : gbps)
          for (const char* s : {"zero3", "zeropp"}) {
            ResultView r = row(n, s, 1000.0 * n * t / 4096);
            r.tokens_per_gpu = t;
            r.nic_gbps = g;
            rs.push_back(r);
          }
    return rs;
  };
  // Each result is drawn in some chart; those of one chart differ in the axis and strategy only.
  const auto check_drawn = [](const std::vector<ResultView>& rs, const ChosenAxes& axes) {
    std::set<const ResultView*> drawn;
    for (const auto* along : {&axes.bandwidth, &axes.gpus, &axes.tokens_per_gpu})
      for (const AxisGroup& g : *along) {
        drawn.insert(g.rows.begin(), g.rows.end());
        CHECK(g.rows.size() == g.xs.size() * distinct_strategies(g.rows).size());
      }
    CHECK(drawn.size() == rs.size());
  };
  // Tokens per GPU at one bandwidth: one chart over tokens per GPU.
  std::vector<ResultView> rs = sweep({2}, {4096, 8192, 16384}, {400});
  ChosenAxes axes = choose_axes(rs);
  check_drawn(rs, axes);
  CHECK(axes.bandwidth.empty());
  CHECK(axes.gpus.empty());
  REQUIRE(axes.tokens_per_gpu.size() == 1u);
  CHECK(axes.tokens_per_gpu[0].xs == std::vector<double>{4096, 8192, 16384});
  const std::string html = render_html(rs, "tokens.json");
  CHECK(html.find("Throughput vs tokens per GPU") != std::string::npos);
  CHECK(html.find("Throughput vs network bandwidth") == std::string::npos);
  // And over bandwidths too: one bandwidth chart per tokens per GPU.
  rs = sweep({2}, {4096, 8192}, {100, 400});
  axes = choose_axes(rs);
  check_drawn(rs, axes);
  CHECK(axes.bandwidth.size() == 2u);
  CHECK(axes.tokens_per_gpu.empty());
  // Nodes and tokens per GPU at one bandwidth: a scaling series per tokens per GPU.
  rs = sweep({1, 2, 4}, {4096, 8192}, {400});
  axes = choose_axes(rs);
  check_drawn(rs, axes);
  CHECK(axes.gpus.size() == 2u);
  CHECK(axes.bandwidth.empty());
  CHECK(axes.tokens_per_gpu.empty());
  // Nothing varies but the strategy: bars at the one bandwidth.
  rs = sweep({2}, {4096}, {400});
  axes = choose_axes(rs);
  check_drawn(rs, axes);
  CHECK(axes.bandwidth.size() == 1u);
}
