// compute_breakdown (a sweep over the streams' interval boundaries, merged stream by stream, with
// active categories counted incrementally) against a plain reference that, for every interval
// between consecutive distinct boundaries, finds the active ops from scratch: busy, exposed
// (per kind and total), kernel-exposed and idle times must be equal bit for bit, on random
// programs with every category on every stream and on lowered ZeRO-3 / ZeRO++ steps.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include "sim/net/analytic_network.hpp"
#include "sim/step/breakdown.hpp"
#include "sim/step/lower.hpp"
#include "tests/program/stub_network.hpp"
#include "tests/step/gpt18b_setup.hpp"

using namespace zerosim;

namespace {

constexpr int kCats = static_cast<int>(Category::Other) + 1;

bool compute_cat(int c) {
  const auto k = static_cast<Category>(c);
  return k == Category::Compute || k == Category::Recompute || k == Category::Optimizer;
}
bool comm_cat(int c) {
  const auto k = static_cast<Category>(c);
  return k == Category::AllGather || k == Category::ReduceScatter || k == Category::AllToAll ||
         k == Category::AllReduce;
}

// The definition, evaluated interval by interval (same additions in the same order: intervals in
// time order, categories in enum order).
StepBreakdown reference(const StepProgram& p, const RunResult& run) {
  StepBreakdown b;
  struct Span {
    double start, end;
    int cat;
  };
  std::vector<Span> spans;
  std::array<double, kCats> busy{}, exposed{};
  std::array<bool, kCats> busy_seen{}, exposed_seen{};
  std::vector<double> times;
  for (const auto& lane : run.lanes)  // busy sums: stream by stream, each in op order
    for (const auto& t : lane) {
      const int c = static_cast<int>(p.streams[static_cast<std::size_t>(t.stream)]
                                         .ops[static_cast<std::size_t>(t.op)]
                                         .category);
      busy[static_cast<std::size_t>(c)] += t.end - t.start;
      busy_seen[static_cast<std::size_t>(c)] = true;
      if (t.end > t.start) {
        spans.push_back({t.start, t.end, c});
        times.push_back(t.start);
        times.push_back(t.end);
      }
    }
  times.push_back(run.makespan_s);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  double prev = 0;
  for (double t : times) {
    const double dt = t - prev;
    if (dt > 0) {
      std::array<bool, kCats> on{};
      for (const Span& s : spans)
        if (s.start <= prev && s.end >= t) on[static_cast<std::size_t>(s.cat)] = true;
      int computing = 0, kinds = 0, fetch = 0, others = 0;
      for (int c = 0; c < kCats; ++c)
        if (on[static_cast<std::size_t>(c)])
          ++(compute_cat(c)                                     ? computing
             : comm_cat(c)                                      ? kinds
             : static_cast<Category>(c) == Category::ParamFetch ? fetch
                                                                : others);
      if (computing == 0) {
        if (kinds > 0) {
          for (int c = 0; c < kCats; ++c)
            if (on[static_cast<std::size_t>(c)] && comm_cat(c)) {
              exposed[static_cast<std::size_t>(c)] += dt / kinds;
              exposed_seen[static_cast<std::size_t>(c)] = true;
            }
          b.exposed_comm_total_s += dt;
        } else if (fetch > 0) {
          b.exposed_fetch_s += dt;
        } else if (others > 0) {
          b.exposed_kernels_s += dt;
        } else {
          b.compute_idle_s += dt;
        }
      }
    }
    prev = std::max(prev, t);
  }
  for (int c = 0; c < kCats; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (busy_seen[i]) b.busy_s[to_string(static_cast<Category>(c))] = busy[i];
    if (exposed_seen[i]) b.exposed_comm_s[to_string(static_cast<Category>(c))] = exposed[i];
  }
  return b;
}

void check_equal(const StepBreakdown& a, const StepBreakdown& b) {
  CHECK(a.busy_s == b.busy_s);
  CHECK(a.exposed_comm_s == b.exposed_comm_s);
  CHECK(a.exposed_comm_total_s == b.exposed_comm_total_s);
  CHECK(a.exposed_kernels_s == b.exposed_kernels_s);
  CHECK(a.exposed_fetch_s == b.exposed_fetch_s);
  CHECK(a.compute_idle_s == b.compute_idle_s);
}

// Random deadlock-free programs (every Wait names an event recorded earlier in emission order),
// random categories on every stream, durations on a coarse grid so that boundaries of different
// streams coincide often, and some zero durations.
StepProgram random_program(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> streams_d(1, 5), kind_d(0, 5), len_d(10, 300), cat_d(0, 8),
      grid_d(0, 4);
  StepProgram p;
  const int S = streams_d(rng);
  for (int s = 0; s < S; ++s) p.streams.push_back({"s" + std::to_string(s), {}});
  std::uniform_int_distribution<int> stream_d(0, S - 1);
  const int n = len_d(rng);
  auto dur = [&] { return grid_d(rng) * 0.25e-3; };
  for (int i = 0; i < n; ++i) {
    auto& ops = p.streams[static_cast<std::size_t>(stream_d(rng))].ops;
    const auto cat = static_cast<Category>(cat_d(rng));
    switch (kind_d(rng)) {
      case 0:
      case 1:
        ops.push_back({OpKind::Compute, cat, dur(), -1, -1, -1});
        break;
      case 2: {
        CollectiveOp c;
        c.bytes = dur() * 1e9;
        p.collectives.push_back(c);
        ops.push_back(
            {OpKind::Collective, cat, 0, static_cast<int>(p.collectives.size()) - 1, -1, -1});
        break;
      }
      case 3:
      case 4:
        ops.push_back({OpKind::Record, Category::Other, 0, -1, p.event_count++, -1});
        break;
      default:
        if (p.event_count > 0)
          ops.push_back({OpKind::Wait, Category::Other, 0, -1,
                         static_cast<int>(rng() % static_cast<unsigned>(p.event_count)), -1});
    }
  }
  return p;
}

}  // namespace

TEST_CASE("breakdown of random programs equals the interval-by-interval reference") {
  std::mt19937_64 rng(20261203);
  int exposed_cases = 0, shared_cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    CAPTURE(trial);
    const StepProgram p = random_program(rng);
    Engine e;
    StubNetwork net(e, true);
    const RunResult run = run_program(p, e, net);
    const StepBreakdown got = compute_breakdown(p, run);
    check_equal(got, reference(p, run));
    exposed_cases += got.exposed_comm_total_s > 0;
    shared_cases += got.exposed_comm_s.size() > 1;
  }
  // The grid makes exposed communication, and kinds sharing it, common.
  CHECK(exposed_cases > 100);
  CHECK(shared_cases > 50);
}

TEST_CASE("breakdown of lowered steps equals the reference") {
  for (const char* strategy : {"zero3", "zeropp", "zero3+qgz", "zero3+hpz"})
    for (int nodes : {1, 3}) {
      CAPTURE(strategy);
      CAPTURE(nodes);
      auto topo = load_cluster("dgx2-v100", ClusterOverrides{nodes, 4, 100, "", 0});
      auto prof = select_cost_profile("", topo);
      StepSetup st = gpt18b_setup(strategy, 2048, 2048, 2);
      st.strategy.qgz_chunks = 2;
      const LoweredStep low = lower_step(st, topo, prof);
      Engine e;
      AnalyticNetwork net(e, topo, prof, false);
      e.add_model(&net);
      const RunResult run = run_program(low.program, e, net);
      const StepBreakdown got = compute_breakdown(low.program, run);
      check_equal(got, reference(low.program, run));
      CHECK(got.exposed_comm_total_s > 0);
    }
}
