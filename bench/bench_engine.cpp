// Engine throughput: events per second through the heap with small callbacks (no model attached)
// and with a polled model.
#include <benchmark/benchmark.h>

#include "sim/engine/engine.hpp"

using namespace zerosim;

// N events pending at any moment; each one reschedules itself a pseudo-random delay later.
static void BM_EngineEvents(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const std::uint64_t total = 2'000'000;
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine e;
    std::uint64_t left = total, x = 88172645463325252ULL;
    struct Tick {
      Engine* e;
      std::uint64_t* left;
      std::uint64_t* x;
      void operator()() const {
        if (*left == 0) return;
        --*left;
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        e->schedule_after(static_cast<double>(*x >> 44) * 1e-9, *this);
      }
    };
    for (int i = 0; i < pending; ++i) e.schedule_at(0, Tick{&e, &left, &x});
    e.run();
    events += e.events_processed();
    benchmark::DoNotOptimize(e.now());
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Arg(16)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

namespace {
struct IdleModel : Model {
  double next_event_time() const override { return kNever; }
  void advance_to(double) override {}
};
}  // namespace

// Same with one idle model polled before each event (the network model's usual overhead).
static void BM_EngineEventsWithModel(benchmark::State& state) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine e;
    IdleModel m;
    e.add_model(&m);
    std::uint64_t left = 2'000'000;
    struct Tick {
      Engine* e;
      std::uint64_t* left;
      void operator()() const {
        if (*left == 0) return;
        --*left;
        e->schedule_after(1e-6, *this);
      }
    };
    for (int i = 0; i < 64; ++i) e.schedule_at(i * 1e-8, Tick{&e, &left});
    e.run();
    events += e.events_processed();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEventsWithModel)->Unit(benchmark::kMillisecond);
