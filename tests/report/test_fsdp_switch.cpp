// Switching from FSDP to ZeRO: pairs are an FSDP run and a ZeRO-3 / ZeRO++ run of the same
// scenario otherwise (never two FSDP runs, never across clusters or batches), and the paragraph
// states the changes computed from the two runs' numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/report/fsdp_switch.hpp"

using namespace zerosim::report;

namespace {

ResultView run(const std::string& strategy, double step, double inter, double peak) {
  ResultView v;
  v.cluster = "dgx-a100";
  v.nodes = 4;
  v.gpus = 32;
  v.model = "mpt-7b";
  v.tokens_per_gpu = 4096;
  v.seq_len = 2048;
  v.strategy = strategy;
  v.step_time_s = step;
  v.tokens_per_s = 32.0 * 4096 / step;
  v.inter_node_bytes = inter;
  v.peak_bytes_per_gpu = peak;
  v.capacity_bytes = 80.0 * (1 << 30);
  return v;
}

}  // namespace

TEST_CASE("an FSDP run pairs with the ZeRO-3 family runs of its scenario only") {
  const ResultView fsdp = run("fsdp", 2, 4e9, 40.0 * (1 << 30));
  const ResultView op = run("fsdp-grad-op", 2, 4e9, 40.0 * (1 << 30));
  const ResultView zpp = run("zeropp", 1.5, 1e9, 42.0 * (1 << 30));
  const ResultView z1 = run("zero1", 1, 1e9, 60.0 * (1 << 30));
  ResultView other_batch = run("zero3", 1.8, 4e9, 40.0 * (1 << 30));
  other_batch.tokens_per_gpu = 8192;
  const auto pairs = fsdp_switches({&fsdp, &op, &zpp, &z1, &other_batch});
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].fsdp == &fsdp);
  CHECK(pairs[0].zero == &zpp);
  CHECK(pairs[1].fsdp == &op);
  CHECK(pairs[1].zero == &zpp);
  CHECK(render_fsdp_switch_markdown({&fsdp, &op}).empty());
}

TEST_CASE("the paragraph states step time, tokens/s, cross-node bytes and memory changes") {
  const ResultView fsdp = run("fsdp", 2, 4.0 * (1 << 30), 40.0 * (1 << 30));
  const ResultView zpp = run("zeropp", 1.5, 1.0 * (1 << 30), 42.0 * (1 << 30));
  const std::string p = fsdp_switch_paragraph({&fsdp, &zpp});
  // 1.5 / 2 - 1 = -25%; tokens/s 2 / 1.5 - 1 = +33.3%; bytes 1/4 - 1 = -75%; memory 42/40 = +5%.
  CHECK(p.find("Switching from FSDP FULL_SHARD to ZeRO++") == 0);
  CHECK(p.find("step time 2.000 s -> 1.500 s (-25.0%, tokens/s +33.3%)") != std::string::npos);
  CHECK(p.find("cross-node bytes per step 4.00 GiB -> 1.00 GiB (-75.0%)") != std::string::npos);
  CHECK(p.find("peak memory per GPU 40.00 GiB -> 42.00 GiB (+5.0%)") != std::string::npos);
  ResultView full = zpp;
  full.fits = false;
  CHECK(fsdp_switch_paragraph({&fsdp, &full}).find("ZeRO++ does not fit") != std::string::npos);
  const std::string html = render_fsdp_switch_html({&fsdp, &zpp});
  CHECK(html.find("<h2>Switching from FSDP to ZeRO</h2>") != std::string::npos);
  CHECK(html.find("-&gt; 1.500 s") != std::string::npos);
}
