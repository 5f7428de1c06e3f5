// LoweringCache (sim/step/lowering_cache.hpp) reuses a lowered step across scenarios that
// differ only in tokens per micro-step, re-timing it in place. Every reuse must equal a fresh
// lower_step field by field (durations bit for bit), a program still held must not change, and
// any other difference of the setup must lower afresh.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/profile/cost_profile.hpp"
#include "sim/step/lowering_cache.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/step/gpt18b_setup.hpp"

using namespace zerosim;

namespace {

void check_same(const LoweredStep& got, const LoweredStep& want) {
  const StepProgram& a = got.program;
  const StepProgram& b = want.program;
  REQUIRE(a.streams.size() == b.streams.size());
  for (std::size_t s = 0; s < a.streams.size(); ++s) {
    CHECK(a.streams[s].name == b.streams[s].name);
    REQUIRE(a.streams[s].ops.size() == b.streams[s].ops.size());
    int differing = 0;
    for (std::size_t i = 0; i < a.streams[s].ops.size(); ++i) {
      const StepOp& x = a.streams[s].ops[i];
      const StepOp& y = b.streams[s].ops[i];
      const bool same = x.kind == y.kind && x.category == y.category &&
                        x.duration_s == y.duration_s && x.collective == y.collective &&
                        x.event == y.event && a.label_text(x.label) == b.label_text(y.label);
      differing += same ? 0 : 1;
    }
    CHECK(differing == 0);
  }
  REQUIRE(a.collectives.size() == b.collectives.size());
  for (std::size_t c = 0; c < a.collectives.size(); ++c) {
    CHECK(a.collectives[c].kind == b.collectives[c].kind);
    CHECK(a.collectives[c].algorithm == b.collectives[c].algorithm);
    CHECK(a.collectives[c].bytes == b.collectives[c].bytes);
    CHECK(a.collectives[c].groups == b.collectives[c].groups);
  }
  CHECK(a.event_count == b.event_count);
  CHECK(got.collective_phase == want.collective_phase);
  CHECK(got.collective_slots == want.collective_slots);
  CHECK(got.modules == want.modules);  // the same memoized modules, for these tokens
  CHECK(got.buckets.size() == want.buckets.size());
  CHECK(got.qgz_active == want.qgz_active);
  CHECK(got.optimizer_bytes == want.optimizer_bytes);
  CHECK(got.tokens == want.tokens);
}

struct Case {
  std::string cluster;
  int nodes;
  std::string strategy;
  int grad_accum, qgz_chunks;
  bool checkpointing;
};

}  // namespace

TEST_CASE("a re-timed step equals a fresh lowering for every tokens value") {
  LoweringCache cache;
  const std::vector<Case> cases = {
      {"dgx-h100", 2, "zeropp", 1, 1, true},        {"dgx-h100", 2, "zeropp", 2, 2, true},
      {"dgx-h100", 4, "zero3", 2, 1, false},        {"dgx2-v100", 1, "zero3+hpz", 1, 1, true},
      {"dgx2-v100", 2, "zero3+qwz", 1, 1, true},    {"dgx2-v100", 2, "zero3+qgz", 2, 3, false},
      {"dgx-h100", 2, "zero3+qwz+hpz", 2, 1, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.cluster);
    CAPTURE(c.strategy);
    CAPTURE(c.grad_accum);
    ClusterOverrides ov;
    ov.nodes = c.nodes;
    const auto topo = shared_cluster(c.cluster, ov);
    const auto prof = shared_select_cost_profile("", topo->gpu_model());
    StepSetup setup = gpt18b_setup(c.strategy, 2048, 2048, c.grad_accum);
    if (setup.strategy.hpz) setup.strategy.hpz_size = topo->gpus_per_node();
    setup.strategy.qgz_chunks = c.qgz_chunks;
    setup.checkpointing = c.checkpointing;
    const LoweredStep* first = nullptr;
    for (std::int64_t tokens : {2048, 1024, 4096, 2048, 6144}) {
      CAPTURE(tokens);
      setup.tokens = tokens;
      const auto got = cache.get(setup, *topo, prof);
      if (!first) first = got.get();
      CHECK(got.get() == first);  // one object, re-timed: the reuse did happen
      check_same(*got, lower_step(setup, *topo, *prof));
    }
  }
}

TEST_CASE("a step still held is not re-timed; other setups are lowered afresh") {
  LoweringCache cache;
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = shared_cluster("dgx-h100", ov);
  const auto prof = shared_select_cost_profile("", topo->gpu_model());
  StepSetup setup = gpt18b_setup("zeropp", 2048, 2048, 1);
  setup.strategy.hpz_size = 8;
  const auto held = cache.get(setup, *topo, prof);
  const LoweredStep before = *held;
  setup.tokens = 4096;
  const auto other = cache.get(setup, *topo, prof);
  CHECK(other.get() != held.get());
  check_same(*held, before);
  check_same(*other, lower_step(setup, *topo, *prof));
  // A different prefetch depth, bucket size or cluster: never the cached program.
  StepSetup deeper = setup;
  deeper.prefetch_depth = 3;
  check_same(*cache.get(deeper, *topo, prof), lower_step(deeper, *topo, *prof));
  StepSetup buckets = setup;
  buckets.strategy.reduce_bucket_elems = 50'000'000;
  check_same(*cache.get(buckets, *topo, prof), lower_step(buckets, *topo, *prof));
  ov.nodes = 4;
  const auto bigger = shared_cluster("dgx-h100", ov);
  check_same(*cache.get(setup, *bigger, prof), lower_step(setup, *bigger, *prof));
}

TEST_CASE("clusters with the same rank layout share one program; other layouts do not") {
  LoweringCache cache;
  StepSetup setup = gpt18b_setup("zeropp", 2048, 2048, 1);
  setup.strategy.hpz_size = 8;
  ClusterOverrides ov;
  ov.nodes = 4;
  const auto base = shared_cluster("dgx-h100", ov);
  const auto prof = shared_select_cost_profile("", base->gpu_model());
  const auto first = cache.get(setup, *base, prof);
  for (double gbps : {100.0, 800.0}) {
    ClusterOverrides slower = ov;
    slower.nic_gbps = gbps;
    const auto other = shared_cluster("dgx-h100", slower);
    REQUIRE(other.get() != base.get());
    const auto got = cache.get(setup, *other, prof);
    CHECK(got.get() == first.get());
    check_same(*got, lower_step(setup, *other, *prof));
  }
  ClusterOverrides fat = ov;
  fat.fabric = "fat-tree";
  fat.oversubscription = 2;
  CHECK(cache.get(setup, *shared_cluster("dgx-h100", fat), prof).get() == first.get());
  // 32 GPUs as 2 DGX-2 nodes of 16 (same profile object): same GPU count, another layout.
  ClusterOverrides two;
  two.nodes = 2;
  const auto wide = shared_cluster("dgx2-v100", two);
  REQUIRE(wide->gpu_count() == base->gpu_count());
  const auto got = cache.get(setup, *wide, prof);
  CHECK(got.get() != first.get());
  check_same(*got, lower_step(setup, *wide, *prof));
}

TEST_CASE("profiles are keys by value: an equal copy hits, a changed one does not") {
  LoweringCache cache;
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = shared_cluster("dgx-h100", ov);
  const auto prof = shared_select_cost_profile("", topo->gpu_model());
  StepSetup setup = gpt18b_setup("zero3", 2048, 2048, 1);
  const auto first = cache.get(setup, *topo, prof);
  const auto copy = std::make_shared<const CostProfile>(*prof);  // another address, same value
  CHECK(cache.get(setup, *topo, copy).get() == first.get());
  auto changed = std::make_shared<CostProfile>(*prof);
  changed->peak_flops *= 2;
  const auto other = cache.get(setup, *topo, changed);
  CHECK(other.get() != first.get());
  check_same(*other, lower_step(setup, *topo, *changed));
}

TEST_CASE("without reuse every call lowers afresh") {
  LoweringCache cache(false);
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = shared_cluster("dgx-h100", ov);
  const auto prof = shared_select_cost_profile("", topo->gpu_model());
  const StepSetup setup = gpt18b_setup("zero3", 2048, 2048, 1);
  const auto a = cache.get(setup, *topo, prof);
  const auto b = cache.get(setup, *topo, prof);
  CHECK(a.get() != b.get());
  check_same(*a, *b);
}
