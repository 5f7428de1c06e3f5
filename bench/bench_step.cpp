// Whole-step simulation speed: one training step of gpt-18b / gpt-138b under ZeRO-3 and
// ZeRO++, flow and analytic tier, on 64 / 384 / 4096 / 32768 / 131072 / 1048576 GPUs (DGX-2 and
// DGX H100 clusters, rail-optimized and a 2:1 oversubscribed fat-tree). Counters: engine events,
// solver flows, GPUs x layers and the process's peak RSS (getrusage; monotonic over the run, so it
// bounds the largest case run so far). Also: analytic-tier scenarios per second, and the fitted
// exponent b of wall ~ (GPUs x layers)^b.
//
// Cases on 4096+ GPUs run only with ZEROSIM_BENCH_LARGE=1 (up to a second each, 3-5 s and 2.4 GB
// at 1048576 GPUs, most of it the cluster's graph; the flow tier
// folds the H100 clusters' leaf blocks, folding.hpp, and a folded rail all-to-all lists a block-0
// source's transfers into blocks 0 and 1 only, so ZeRO++ routes 16K flows per qgZ phase at any
// node count, not 134M at 32768 GPUs). BM_AnalyticStep: the analytic tier on DGX-2 rail and H100
// fat-tree clusters of 64..32768 GPUs. Times are CPU seconds of one thread.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/core/malloc_tuning.hpp"
#include "sim/step/lowering_cache.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/step/simulate.hpp"
#include "sim/workload/model.hpp"

using namespace zerosim;

namespace {

struct Cluster {
  const char* preset;
  int nodes;
  const char* fabric;  // "" = preset's (rail-optimized)
  double oversubscription;
  int gpus;
};

// DGX-2 nodes: 16 GPUs, 4 x 100 Gb/s NICs (the ZeRO++ paper's cluster); DGX H100: 8 GPUs.
const Cluster kClusters[] = {
    {"dgx2-v100", 4, "", 0, 64},
    {"dgx2-v100", 24, "", 0, 384},
    {"dgx-h100", 48, "fat-tree", 2, 384},
    {"dgx-h100", 512, "", 0, 4096},
    {"dgx-h100", 512, "fat-tree", 2, 4096},
    {"dgx-h100", 4096, "", 0, 32768},
    {"dgx-h100", 16384, "", 0, 131072},
    {"dgx-h100", 131072, "", 0, 1048576},  // both tiers' limit (whole leaf blocks)
};
const char* kModels[] = {"gpt-18b", "gpt-138b"};
const char* kStrategies[] = {"zero3", "zeropp"};
const NetworkTier kTiers[] = {NetworkTier::Flow, NetworkTier::Analytic};

Scenario scenario(const Cluster& c, const char* model, const char* strategy, NetworkTier tier) {
  Scenario s;
  s.cluster = c.preset;
  s.nodes = c.nodes;
  if (std::string(c.preset) == "dgx2-v100") {
    s.nics_per_node = 4;
    s.nic_gbps = 100;
  }
  s.fabric = c.fabric;
  s.oversubscription = c.oversubscription;
  s.model = model;
  s.strategy = strategy;
  s.tier = tier;
  s.tokens_per_gpu = 2048;
  return s;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

int layers_of(const char* model) { return load_model(model).layers; }

// The context of every step case: each iteration lowers and runs its step, as a single run does,
// but the cluster, the parsed files, the modules and the fabric's plans are built once per case
// (what is timed is the step, not the reading of its inputs).
SimContext& step_context() {
  static SimContext context([] {
    ReferenceModes modes;
    modes.lowering_reuse = false;
    return modes;
  }());
  return context;
}

// One whole step of (cluster, model, strategy, tier) per iteration, with the counters above.
void step_case(benchmark::State& state, const Cluster& c, const char* model, const Scenario& s) {
  state.SetLabel(std::string(c.preset) + "/" + std::to_string(c.gpus) + "gpu/" +
                 (c.fabric[0] ? "fat-tree-2:1" : "rail") + "/" + model + "/" + s.strategy + "/" +
                 std::string(choice_name(s.tier)));
  StepResult r;
  SimContext& context = step_context();
  for (auto _ : state) {
    r = simulate(s, context);
    benchmark::DoNotOptimize(r);
  }
  state.counters["events"] = static_cast<double>(r.engine_events);
  state.counters["flows"] = static_cast<double>(r.comm.flows);
  state.counters["gpus"] = c.gpus;
  state.counters["gpu_layers"] = static_cast<double>(c.gpus) * layers_of(model);
  state.counters["step_s"] = r.step_time_s;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

// args: cluster, model, strategy, tier (indices into the tables above).
void BM_Step(benchmark::State& state) {
  const Cluster& c = kClusters[state.range(0)];
  const char* model = kModels[state.range(1)];
  step_case(state, c, model,
            scenario(c, model, kStrategies[state.range(2)], kTiers[state.range(3)]));
}

// Analytic tier only: DGX-2 rail (4 x 100 Gb/s) and DGX H100 2:1 fat-tree, 64 .. 32768 GPUs.
const Cluster kAnalyticClusters[] = {
    {"dgx2-v100", 4, "", 0, 64},
    {"dgx2-v100", 24, "", 0, 384},
    {"dgx2-v100", 256, "", 0, 4096},
    {"dgx2-v100", 2048, "", 0, 32768},
    {"dgx-h100", 8, "fat-tree", 2, 64},
    {"dgx-h100", 48, "fat-tree", 2, 384},
    {"dgx-h100", 512, "fat-tree", 2, 4096},
    {"dgx-h100", 4096, "fat-tree", 2, 32768},
};

// args: analytic cluster, model, strategy.
void BM_AnalyticStep(benchmark::State& state) {
  const Cluster& c = kAnalyticClusters[state.range(0)];
  const char* model = kModels[state.range(1)];
  step_case(state, c, model,
            scenario(c, model, kStrategies[state.range(2)], NetworkTier::Analytic));
}

void register_steps() {
  const bool large = std::getenv("ZEROSIM_BENCH_LARGE") != nullptr;
  for (int c = 0; c < static_cast<int>(std::size(kClusters)); ++c)
    for (int m = 0; m < 2; ++m)
      for (int st = 0; st < 2; ++st)
        for (int t = 0; t < 2; ++t) {
          const bool flow = t == 0;
          if (kClusters[c].gpus > 384 && !large) continue;  // seconds each on one core
          if (kClusters[c].gpus > tier_max_gpus(kTiers[t])) continue;
          benchmark::RegisterBenchmark("BM_Step", BM_Step)
              ->Args({c, m, st, t})
              ->Unit(benchmark::kMillisecond)
              ->Iterations(flow || kClusters[c].gpus > 384 ? 1 : 5);
        }
  for (int c = 0; c < static_cast<int>(std::size(kAnalyticClusters)); ++c)
    for (int m = 0; m < 2; ++m)
      for (int st = 0; st < 2; ++st) {
        if (kAnalyticClusters[c].gpus > 384 && !large) continue;
        benchmark::RegisterBenchmark("BM_AnalyticStep", BM_AnalyticStep)
            ->Args({c, m, st})
            ->Unit(benchmark::kMillisecond)
            ->Iterations(kAnalyticClusters[c].gpus > 384 ? 1 : 5);
      }
}

// The steady state of a sweep thread: its context has seen every scenario of the cycle once (each
// benchmark run starts from a fresh context, so without this the first pass's plan building
// would be timed again in every run, a share that depends on how many iterations the run has).
void warm(const std::vector<Scenario>& ss, SimContext& context) {
  for (const Scenario& s : ss) benchmark::DoNotOptimize(simulate(s, context));
}

// Analytic-tier planning throughput: distinct scenarios per second, a new cluster each time (32
// node counts cycle through the context's 8-entry cluster cache, so every cluster is rebuilt;
// the fabric plans, kept for 64 fabrics, are found again).
void BM_AnalyticScenarios(benchmark::State& state) {
  std::vector<Scenario> ss;
  for (int nodes = 1; nodes <= 32; ++nodes)
    ss.push_back(scenario(Cluster{"dgx-h100", nodes, "", 0, 8 * nodes}, "gpt-18b", "zeropp",
                          NetworkTier::Analytic));
  std::size_t i = 0;
  SimContext context;  // held across iterations, as a sweep thread holds its own
  warm(ss, context);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(ss[i++ % ss.size()], context));
  state.counters["scenarios_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Planner-sweep throughput: a grid of 300 distinct scenarios in sweep order (cluster outermost, as
// `zerosim sweep` and `zerosim plan` enumerate them): 5 cluster sizes x 2 models x 5 strategies x 3
// batch sizes x 2 accumulation steps, analytic tier, whole simulate() with its result JSON. What a
// sweep shares across scenarios (the cluster graph per thread, the model's modules, the per-byte
// collective plans, and the lowered program of scenarios that differ only in tokens per GPU,
// re-timed: lowering_cache.hpp) is shared here too; every scenario still schedules and reports.
void BM_SweepScenarios(benchmark::State& state) {
  std::vector<Scenario> ss;
  for (int nodes : {2, 4, 8, 16, 32})
    for (const char* model : {"gpt-18b", "gpt-49b"})
      for (const char* strategy : {"zero3", "zeropp", "zero3+qwz", "zero3+hpz", "zero3+qgz"})
        for (int tokens : {1024, 2048, 4096})
          for (int accum : {1, 2}) {
            Scenario s = scenario(Cluster{"dgx-h100", nodes, "", 0, 8 * nodes}, model, strategy,
                                  NetworkTier::Analytic);
            s.tokens_per_gpu = tokens;
            s.grad_accum = accum;
            ss.push_back(s);
          }
  std::size_t i = 0;
  SimContext context;  // held across iterations, as a sweep thread holds its own
  warm(ss, context);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(ss[i++ % ss.size()], context));
  state.counters["scenarios_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["distinct"] = static_cast<double>(ss.size());
}

// Least-squares slope of log(wall) on log(GPUs x layers) over a grid of flow-tier steps.
void BM_ScalingExponent(benchmark::State& state) {
  const NetworkTier tier = kTiers[state.range(0)];
  std::vector<double> x, y;
  for (auto _ : state) {
    x.clear();
    y.clear();
    for (const char* model : kModels)
      for (int nodes : {1, 2, 4, 8, 16}) {
        const Cluster c{"dgx2-v100", nodes, "", 0, 16 * nodes};
        const Scenario s = scenario(c, model, "zeropp", tier);
        const auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(simulate(s));
        const double dt =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        x.push_back(std::log(static_cast<double>(c.gpus) * layers_of(model)));
        y.push_back(std::log(dt));
      }
  }
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  state.SetLabel(std::string(choice_name(tier)) + ": gpt-18b/138b zeropp on 16..256 DGX-2 GPUs");
  state.counters["exponent"] = (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

const bool registered = [] {
  keep_freed_memory();  // as the CLI does (malloc_tuning.hpp)
  register_steps();
  return true;
}();

}  // namespace

BENCHMARK(BM_AnalyticScenarios)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SweepScenarios)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScalingExponent)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);
