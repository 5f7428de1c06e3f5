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
#include "sim/strategy/fetch_trace.hpp"
#include "sim/topology/cluster_cache.hpp"
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
  CHECK(got.phase_splits == want.phase_splits);
  CHECK(got.collective_slots == want.collective_slots);
  // The same modules, for these tokens.
  REQUIRE(got.modules->size() == want.modules->size());
  for (std::size_t m = 0; m < got.modules->size(); ++m) {
    CHECK((*got.modules)[m].name == (*want.modules)[m].name);
    CHECK((*got.modules)[m].forward_flops() == (*want.modules)[m].forward_flops());
    CHECK((*got.modules)[m].param_elems() == (*want.modules)[m].param_elems());
  }
  CHECK(got.buckets.size() == want.buckets.size());
  CHECK(got.qgz_active == want.qgz_active);
  CHECK(got.optimizer_bytes == want.optimizer_bytes);
  CHECK(got.tokens == want.tokens);
  // The memory model's held weights, kept by the lowering: those of its trace and modules.
  CHECK(got.max_held_elems == want.max_held_elems);
  CHECK(got.max_held_elems == max_held_elems(got.trace, *got.modules));
}

struct Case {
  std::string cluster;
  int nodes;
  std::string strategy;
  int grad_accum, qgz_chunks;
  bool checkpointing;
};

// What a SimContext holds beside the lowering cache.
struct Caches {
  FileCache files;
  ClusterCache clusters;
  ModuleCache modules;
};

}  // namespace

TEST_CASE("a re-timed step equals a fresh lowering for every tokens value") {
  Caches caches;
  auto& [files, clusters, modules] = caches;
  LoweringCache cache(modules);
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
    const auto topo = clusters.get(c.cluster, ov, files);
    const auto prof = shared_select_cost_profile("", topo->gpu_model(), &files);
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
  Caches caches;
  auto& [files, clusters, modules] = caches;
  LoweringCache cache(modules);
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = clusters.get("dgx-h100", ov, files);
  const auto prof = shared_select_cost_profile("", topo->gpu_model(), &files);
  StepSetup setup = gpt18b_setup("zeropp", 2048, 2048, 1);
  setup.strategy.hpz_size = 8;
  const auto held = cache.get(setup, *topo, prof);
  // A snapshot of the held step, compared after the cache's next call: a copy, not a reference.
  const LoweredStep before = *held;  // NOLINT(performance-unnecessary-copy-initialization)
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
  const auto bigger = clusters.get("dgx-h100", ov, files);
  check_same(*cache.get(setup, *bigger, prof), lower_step(setup, *bigger, *prof));
}

TEST_CASE("clusters with the same rank layout share one program; other layouts do not") {
  Caches caches;
  auto& [files, clusters, modules] = caches;
  LoweringCache cache(modules);
  StepSetup setup = gpt18b_setup("zeropp", 2048, 2048, 1);
  setup.strategy.hpz_size = 8;
  ClusterOverrides ov;
  ov.nodes = 4;
  const auto base = clusters.get("dgx-h100", ov, files);
  const auto prof = shared_select_cost_profile("", base->gpu_model(), &files);
  const auto first = cache.get(setup, *base, prof);
  for (double gbps : {100.0, 800.0}) {
    ClusterOverrides slower = ov;
    slower.nic_gbps = gbps;
    const auto other = clusters.get("dgx-h100", slower, files);
    REQUIRE(other.get() != base.get());
    const auto got = cache.get(setup, *other, prof);
    CHECK(got.get() == first.get());
    check_same(*got, lower_step(setup, *other, *prof));
  }
  ClusterOverrides fat = ov;
  fat.fabric = "fat-tree";
  fat.oversubscription = 2;
  CHECK(cache.get(setup, *clusters.get("dgx-h100", fat, files), prof).get() == first.get());
  // 32 GPUs as 2 DGX-2 nodes of 16 (same profile object): same GPU count, another layout.
  ClusterOverrides two;
  two.nodes = 2;
  const auto wide = clusters.get("dgx2-v100", two, files);
  REQUIRE(wide->gpu_count() == base->gpu_count());
  const auto got = cache.get(setup, *wide, prof);
  CHECK(got.get() != first.get());
  check_same(*got, lower_step(setup, *wide, *prof));
}

TEST_CASE("profiles are keys by value: an equal copy hits, a changed one does not") {
  Caches caches;
  auto& [files, clusters, modules] = caches;
  LoweringCache cache(modules);
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = clusters.get("dgx-h100", ov, files);
  const auto prof = shared_select_cost_profile("", topo->gpu_model(), &files);
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
  Caches caches;
  auto& [files, clusters, modules] = caches;
  LoweringCache cache(modules, false);
  ClusterOverrides ov;
  ov.nodes = 2;
  const auto topo = clusters.get("dgx-h100", ov, files);
  const auto prof = shared_select_cost_profile("", topo->gpu_model(), &files);
  const StepSetup setup = gpt18b_setup("zero3", 2048, 2048, 1);
  const auto a = cache.get(setup, *topo, prof);
  const auto b = cache.get(setup, *topo, prof);
  CHECK(a.get() != b.get());
  check_same(*a, *b);
}
