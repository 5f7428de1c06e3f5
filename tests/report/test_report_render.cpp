// Report renderers on hand-written results: CSV rows and escaping, Markdown tables, HTML with one
// SVG per chart each holding data marks, HTML-escaping of strings from input files.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "../sweep/fake_results.hpp"
#include "sim/core/error.hpp"
#include "sim/report/html.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/report/tables.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::report;

namespace {

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("read_results accepts sweep, array and single results and rejects malformed ones") {
  auto doc = testing::fake_paper_sweep();
  CHECK(read_results(doc, "a.json").size() == 40u);
  CHECK(read_results(doc["results"], "a.json").size() == 40u);
  CHECK(read_results(doc["results"][0], "a.json").size() == 1u);
  json bad = doc;
  bad["results"][3].erase("step_time_s");
  const auto e = caught_input_error([&] { read_results(bad, "bad.json"); });
  CHECK(e.file() == "bad.json");
  CHECK(e.path() == "/results/3");
  bad = doc;
  bad["results"][2]["memory"]["fits"] = "yes";
  CHECK_THROWS_AS(read_results(bad, "bad.json"), InputError);
  CHECK_THROWS_AS(read_results(json{{"kind", "sweep"}, {"results", json::array()}}, "e.json"),
                  InputError);
  CHECK_THROWS_AS(read_results(json{{"hello", 1}}, "e.json"), InputError);
}

TEST_CASE("strategy names and order") {
  CHECK(strategy_display("zero3") == "ZeRO-3");
  CHECK(strategy_display("zeropp") == "ZeRO++");
  CHECK(strategy_display("zero3+qwz+hpz+qgz") == "ZeRO++");
  CHECK(strategy_display("zero3+hpz+qwz") == "ZeRO-3 + qwZ + hpZ");
  CHECK(strategy_rank("zero3") < strategy_rank("zero3+qgz"));
  CHECK(strategy_rank("zero3+qgz") < strategy_rank("zero3+qwz+hpz"));
  CHECK(strategy_rank("zero3+hpz+qgz") < strategy_rank("zeropp"));
  // Stages 1 and 2 before ZeRO-3, HSDP after ZeRO++, each with a color of its own.
  CHECK(strategy_display("zero1") == "ZeRO-1");
  CHECK(strategy_display("zero2") == "ZeRO-2");
  CHECK(strategy_display("hsdp") == "HSDP");
  CHECK(strategy_rank("zero1") < strategy_rank("zero2"));
  CHECK(strategy_rank("zero2") < strategy_rank("zero3"));
  CHECK(strategy_rank("zeropp") < strategy_rank("hsdp"));
  CHECK(strategy_rank("hsdp") < strategy_rank("fsdp"));  // unknown ones last
  std::set<std::string> colors;
  for (const char* s : {"zero1", "zero2", "hsdp", "zero3", "zero3+qwz", "zero3+hpz", "zero3+qgz",
                        "zero3+qwz+hpz", "zero3+qwz+qgz", "zero3+hpz+qgz", "zeropp", "fsdp"})
    CHECK(colors.insert(strategy_color(s)).second);
}

TEST_CASE("CSV: header plus one row per result, metrics round-trip") {
  auto rows = read_results(testing::fake_paper_sweep(), "s.json");
  std::string csv = render_csv(rows);
  CHECK(count(csv, "\n") == rows.size() + 1);
  CHECK(csv.rfind("cluster,nodes,gpus,", 0) == 0);
  // The first row's step time printed in shortest round-trip form.
  CHECK(csv.find(fmt::format(",{},", rows[0].step_time_s)) != std::string::npos);
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("=cmd()") == "'=cmd()");
  CHECK(csv_field("-1.5") == "-1.5");
}

TEST_CASE("Markdown: a table per group with speedups against ZeRO-3") {
  auto rows = read_results(testing::fake_paper_sweep(), "s.json");
  std::string md = render_markdown(rows, "s.json");
  CHECK(count(md, "\n## ") == 2);       // 1K and 2K tokens per GPU
  CHECK(count(md, "| 1.00x |") == 8u);  // ZeRO-3 against itself, 2 groups x 4 bandwidths
  const ResultView& z3 = rows[0];
  const ResultView& zpp = rows[4];
  REQUIRE(z3.strategy == "zero3");
  REQUIRE(zpp.strategy == "zeropp");
  CHECK(md.find(fmt::format("| {:.2f}x |", zpp.tflops_per_gpu / z3.tflops_per_gpu)) !=
        std::string::npos);
  CHECK(md_cell("a|b<c>") == "a\\|b&lt;c&gt;");
}

TEST_CASE("HTML: four kinds of chart, each with data marks, titles, axis labels and legends") {
  auto rows = read_results(testing::fake_paper_sweep(), "s.json");
  std::string html = render_html(rows, "s.json");
  // 2 throughput + 1 speedup + 2 breakdown + 1 memory.
  // By string search: libstdc++'s regex recurses once per character of a lazy match, which
  // overflows the stack on a whole chart (found under ASan).
  std::vector<std::string> svgs;
  for (std::size_t pos = html.find("<svg"); pos != std::string::npos;
       pos = html.find("<svg", pos)) {
    const std::size_t stop = html.find("</svg>", pos);
    REQUIRE(stop != std::string::npos);
    svgs.push_back(html.substr(pos, stop + 6 - pos));
    pos = stop + 6;
  }
  REQUIRE(svgs.size() == 6u);
  for (const auto& svg : svgs) {
    CAPTURE(svg.substr(0, 300));
    CHECK(count(svg, "class=\"data\"") >= 2u);
    CHECK(count(svg, "font-weight=\"bold\"") == 1u);     // title
    CHECK(svg.find("rotate(-90") != std::string::npos);  // y-axis label
  }
  CHECK(svgs[0].find("Throughput (TFLOPs per GPU)") != std::string::npos);
  CHECK(svgs[0].find("Network bandwidth per node (Gbps)") != std::string::npos);
  // Throughput chart: 4 bandwidths x 5 strategies bars; legend names each strategy.
  CHECK(count(svgs[0], "<rect class=\"data\"") == 20u);
  for (const char* name : {"ZeRO-3", "ZeRO-3 + qwZ", "ZeRO-3 + hpZ", "ZeRO-3 + qgZ", "ZeRO++"})
    CHECK(svgs[0].find(std::string(">") + name + "</text>") != std::string::npos);
  CHECK(svgs[2].find("Speedup of ZeRO++ over ZeRO-3") != std::string::npos);
  CHECK(count(svgs[2], "<circle class=\"data\"") == 8u);  // 2 groups x 4 bandwidths
  CHECK(svgs[3].find("Time per step (ms)") != std::string::npos);
  CHECK(svgs[5].find("capacity") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);                        // self-contained, static
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // no external resources
}

TEST_CASE("HTML: strings from input files are escaped everywhere") {
  const std::string evil = "<script>alert('x')</script>\"&<img src=x onerror=alert(1)>";
  auto doc = testing::fake_paper_sweep(evil);
  doc["results"][0]["warnings"] = json::array({"<b>bold</b> warning"});
  doc["results"][1]["scenario"]["cluster"] = "</svg><script>1</script>";
  auto rows = read_results(doc, "s.json");
  std::string html = render_html(rows, "<evil>.json");
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>bold") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;&lt;img") !=
        std::string::npos);
  CHECK(html.find("&lt;evil&gt;.json") != std::string::npos);
  std::string md = render_markdown(rows, "s.json");
  CHECK(md.find("<script") == std::string::npos);
  CHECK(html_escape("a&b<c>\"d'") == "a&amp;b&lt;c&gt;&quot;d&#39;");
}

TEST_CASE("the step attribution of real results adds up to the step time") {
  // The breakdown chart stacks these parts; a busy time of overlapping work (the quantization
  // kernels) would make a bar taller than its step.
  for (const char* strategy : {"zero3", "zeropp"})
    for (int nics : {1, 8}) {
      Scenario s;
      s.cluster = "dgx2-v100";
      s.nodes = 24;
      s.nics_per_node = nics;
      s.model = "gpt-18b";
      s.strategy = strategy;
      s.tokens_per_gpu = 1024;
      const std::vector<ResultView> views = {view_of(simulate(s))};
      REQUIRE(views.size() == 1);
      double sum = 0;
      for (const auto& p : views[0].step_attribution()) sum += p.seconds;
      CAPTURE(strategy);
      CAPTURE(nics);
      CHECK(sum == zerosim::testing::Approx(views[0].step_time_s).epsilon(1e-9));
    }
}

TEST_CASE("fabric and oversubscription are columns and grouping keys") {
  // Two scenarios that differ only in the fabric's oversubscription: different rows, different
  // groups, each ZeRO++ row compared with the ZeRO-3 row of its own fabric.
  std::vector<ResultView> views;
  for (double oversub : {1.0, 4.0})
    for (const char* strategy : {"zero3", "zeropp"}) {
      Scenario s;
      s.cluster = "dgx-h100";
      s.nodes = 64;
      s.fabric = "fat-tree";
      s.oversubscription = oversub;
      s.model = "gpt-18b";
      s.strategy = strategy;
      s.tier = NetworkTier::Analytic;
      const std::vector<ResultView> v = {view_of(simulate(s))};
      REQUIRE(v.size() == 1);
      CHECK(v[0].fabric == "fat-tree");
      CHECK(v[0].oversubscription == oversub);
      views.push_back(v[0]);
    }
  CHECK(group_key(views[0]) != group_key(views[2]));
  CHECK(group_title(views[2]).find("fat-tree 4:1") != std::string::npos);
  CHECK(zero3_baseline(views, views[3]) == &views[2]);
  CHECK(zero3_baseline(views, views[1]) == &views[0]);
  const std::string csv = render_csv(views);
  CHECK(csv.find(",fat-tree,4,") != std::string::npos);
  CHECK(csv.find(",fat-tree,1,") != std::string::npos);
}

TEST_CASE("recommendation: the fastest that fits, or a simpler one within the tie threshold") {
  auto row = [](const char* strategy, double tflops, bool fits) {
    ResultView v;
    v.strategy = strategy;
    v.tflops_per_gpu = tflops;
    v.tokens_per_s = 1000 * tflops;  // the rule compares throughput (one batch: as TFLOPs)
    v.fits = fits;
    v.nics_per_node = 1;
    v.nic_gbps = 100;
    return v;
  };
  const ResultView z3 = row("zero3", 50, true), hpz = row("zero3+hpz", 99, true),
                   zpp = row("zeropp", 100, true), big = row("zeropp", 150, false);
  // ZeRO++ leads hpZ by 1%: within 2%, so the simpler hpZ is recommended, naming both.
  Recommendation r = recommend({&z3, &hpz, &zpp});
  CHECK(r.pick == &hpz);
  CHECK(r.fastest == &zpp);
  CHECK(r.sentence().find("1.98x ZeRO-3") != std::string::npos);
  CHECK(r.sentence().find("1.0% faster") != std::string::npos);
  // A 3% lead is not a tie.
  const ResultView zpp3 = row("zeropp", 102.1, true);
  CHECK(recommend({&z3, &hpz, &zpp3}).pick == &zpp3);
  // What does not fit is never recommended; nothing fitting says so.
  CHECK(recommend({&z3, &big}).pick == &z3);
  CHECK(recommend({&big}).pick == nullptr);
  CHECK(recommend({&big}).sentence() == "nothing fits in GPU memory");
}

TEST_CASE("a recommendation names the DeepSpeed release it assumes, and hpZ's dependence on it") {
  auto row = [](const char* strategy, double tflops, const char* version, const char* rule) {
    ResultView v;
    v.strategy = strategy;
    v.tflops_per_gpu = tflops;
    v.tokens_per_s = 1000 * tflops;
    v.deepspeed_version = version;
    v.hpz_rule = rule;
    return v;
  };
  const ResultView z3 = row("zero3", 50, "0.19", ""),
                   hpz = row("zero3+hpz", 80, "0.19", "when-present");
  const std::string now = recommend({&z3, &hpz}).sentence();
  CHECK(now.find("assuming DeepSpeed 0.19") != std::string::npos);
  CHECK(now.find("relies on 0.13.2 or later") != std::string::npos);
  const ResultView old3 = row("zero3", 50, "0.10.0", ""),
                   old = row("zero3+hpz", 60, "0.10.0", "backward-hooks-only");
  const std::string then = recommend({&old3, &old}).sentence();
  CHECK(then.find("assuming DeepSpeed 0.10.0") != std::string::npos);
  CHECK(then.find("smaller than from 0.13.2 on") != std::string::npos);
  // Without activation checkpointing there is no recompute to name: the backward's gathers are
  // hpZ's in every release, later micro-steps' forwards from 0.13.2.
  ResultView z3_off = z3, hpz_off = hpz, old3_off = old3, old_off = old;
  for (ResultView* v : {&z3_off, &hpz_off, &old3_off, &old_off}) v->checkpointing = false;
  for (const std::string& off :
       {recommend({&z3_off, &hpz_off}).sentence(), recommend({&old3_off, &old_off}).sentence()}) {
    CAPTURE(off);
    CHECK(off.find("recompute") == std::string::npos);
    CHECK(off.find("without activation checkpointing hpZ serves the backward's gathers") !=
          std::string::npos);
  }
  // Without hpZ no hpZ note.
  CHECK(recommend({&z3}).sentence().find("hpZ") == std::string::npos);
}
