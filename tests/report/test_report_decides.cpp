// What makes a report decide: the ds_config block next to each recommendation, one line per
// distinct warning with its count, the GPU in every label when GPU types differ and a price per
// GPU type, charts within a 1400 px page, one color per strategy (variants in its shades), and why
// a technique that does not help does not.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <regex>
#include <string>

#include "../sweep/fake_results.hpp"
#include "sim/core/json_io.hpp"
#include "sim/report/html.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/report/tables.hpp"
#include "sim/report/technique_notes.hpp"
#include "sim/report/training_time.hpp"
#include "sim/report/warnings.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::report;

TEST_CASE("a recommendation carries the ds_config block that turns it on") {
  auto views = read_results(testing::fake_paper_sweep(), "s.json");
  for (const ResultView& v : views) {
    CAPTURE(v.strategy);
    const json block = json::parse(v.deepspeed_block);
    const json& z = block.at("zero_optimization");
    const auto id = parse_strategy_id(v.strategy);
    CHECK(z.at("stage") == 3);
    CHECK(z.at("zero_quantized_weights") == id.qwz);
    CHECK(z.at("zero_quantized_gradients") == id.qgz);
    CHECK(z.at("zero_hpz_partition_size") == (id.hpz ? 16 : 1));  // one DGX-2 node
  }
  const std::string md = render_markdown(views, "s.json");
  CHECK(md.find("`ds_config: {\"zero_optimization\":") != std::string::npos);
  const std::string html = render_html(views, "s.json");
  CHECK(html.find("<code>ds_config: {&quot;zero_optimization&quot;:") != std::string::npos);
}

TEST_CASE("warnings: one line per distinct text with the results that gave it") {
  auto views = read_results(testing::fake_paper_sweep(), "s.json");
  for (ResultView& v : views) v.warnings = {"shared"};
  views[3].warnings.push_back("only one");
  views[3].warnings.push_back("shared");  // a result counts once
  const auto groups = group_warnings(views);
  REQUIRE(groups.size() == 2u);
  CHECK(groups[0].text == "shared");
  CHECK(groups[0].results.size() == views.size());
  CHECK(warning_scope(groups[0], views.size()) == fmt::format("all {} results", views.size()));
  CHECK(warning_scope(groups[1], views.size()) == views[3].label());
  const std::string md = render_markdown(views, "s.json");
  const std::string section = md.substr(md.find("## Warnings"));
  CHECK(section.find("- shared (all 40 results)") != std::string::npos);
  std::size_t lines = 0;
  for (char c : section) lines += c == '\n';
  CHECK(lines == 5u);  // heading, blank, two warnings, blank
}

TEST_CASE("GPU types: named in labels when they differ; one price per type") {
  auto doc = testing::fake_paper_sweep();
  auto same = read_results(doc, "s.json");
  CHECK(same[0].label().find(" of ") == std::string::npos);
  for (auto& r : doc["results"]) r["scenario"]["gpu_model"] = "V100-SXM3-32GB";
  doc["results"][0]["scenario"]["gpu_model"] = "A100-SXM4-80GB";
  doc["results"][1]["scenario"]["gpu_model"] = "H100-SXM5-80GB";
  auto mixed = read_results(doc, "s.json");
  CHECK(mixed[0].label().find(" of A100-SXM4-80GB") != std::string::npos);
  CHECK(mixed[1].label().find(" of H100-SXM5-80GB") != std::string::npos);

  const GpuPrices p = parse_gpu_prices("h100=4,A100=2", "--gpu-hour-price");
  CHECK(p.of("H100-SXM5-80GB") == std::pair<double, std::string>{4, "h100"});
  CHECK(p.of("A100-SXM4-80GB") == std::pair<double, std::string>{2, "a100"});
  CHECK(p.of("V100-SXM3-32GB").first == 0);
  CHECK(parse_gpu_prices("2.5", "--gpu-hour-price").of("anything").first == 2.5);
  for (const char* bad : {"nan", "h100=", "=4", "h100=4,h100=5", "h100=inf", "0"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_gpu_prices(bad, "--gpu-hour-price"), InputError);
  }
  // The time-to-train table costs each row at its GPU's price and names it.
  const std::string md = render_markdown(mixed, "s.json", {300e9, p});
  const TrainingTime a100 = training_time(mixed[0], 300e9);
  CHECK(md.find(fmt::format("| 2 (a100) | {:.0f} |", a100.gpu_hours * 2)) != std::string::npos);
  CHECK(md.find("no price for V100-SXM3-32GB") != std::string::npos);
}

TEST_CASE("charts fit a 1400 px page: past it the category labels are vertical") {
  ChartSpec c;
  c.title = "wide";
  for (int i = 0; i < 60; ++i) c.categories.push_back(fmt::format("ZeRO-3 + qwZ + qgZ {}\n100", i));
  c.series.push_back({"s", "#000000", std::vector<double>(60, 1.0)});
  const std::string svg = bar_chart(c);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("width=\"(\\d+)\" height=\"(\\d+)\"")));
  CHECK(std::stoi(m[1]) == kMaxChartWidth);
  CHECK(std::stoi(m[2]) > 380);  // the labels' length below the plot
  const std::string vertical = "font-size=\"10\" transform=\"rotate(-90";
  CHECK(svg.find(vertical) != std::string::npos);
  c.categories.resize(3);
  c.series[0].values.resize(3);
  CHECK(bar_chart(c).find(vertical) == std::string::npos);
}

TEST_CASE("one color per strategy: variants are shades of it, experiments grey") {
  CHECK(strategy_color("zeropp", 0) == strategy_color("zeropp"));
  CHECK(strategy_color("zeropp", 1) != strategy_color("zeropp"));
  CHECK(strategy_color("zero3", 1) != strategy_color("zeropp", 1));
  for (std::size_t k = 0; k < 6; ++k)
    for (const char* s : {"zero3", "zero3+qwz", "zero3+hpz", "zero3+qgz", "zeropp", "fsdp"})
      CHECK(neutral_color(k) != strategy_color(s));
}

TEST_CASE("why a technique does not help: from the results' own numbers") {
  auto row = [](const char* strategy, double tokens_per_s) {
    ResultView v;
    v.strategy = strategy;
    v.tokens_per_s = tokens_per_s;
    v.step_time_s = 1000 / tokens_per_s;  // ZeRO-3: 1 s
    v.exposed_all_gather_s = 0.01;
    return v;
  };
  ResultView z3 = row("zero3", 1000), hpz = row("zero3+hpz", 1005), qwz = row("zero3+qwz", 1300);
  hpz.deepspeed_version = "0.19";
  hpz.hpz_rule = "when-present";
  hpz.hpz_rule_text = "the rule";
  const auto notes = technique_notes({&z3, &hpz, &qwz});
  REQUIRE(notes.size() == 1u);  // qwZ helps (1.30x): no note
  CHECK(notes[0].find("ZeRO-3 + hpZ gives 1.00x ZeRO-3's throughput") == 0);
  // ZeRO-3 exposes 10 ms of its 1000 ms step: 1.0%.
  CHECK(notes[0].find("ZeRO-3 exposes 10.000 ms of communication in its 1.000 s step (1.0%)") !=
        std::string::npos);
  CHECK(notes[0].find("DeepSpeed 0.19's hpZ rule (when-present) the rule") != std::string::npos);
}
