#include "sim/step/breakdown.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace zerosim {

namespace {
bool is_compute(Category c) {
  return c == Category::Compute || c == Category::Recompute || c == Category::Optimizer;
}
bool is_comm(Category c) {
  return c == Category::AllGather || c == Category::ReduceScatter || c == Category::AllToAll ||
         c == Category::AllReduce;
}
}  // namespace

StepBreakdown compute_breakdown(const StepProgram& program, const RunResult& run) {
  StepBreakdown b;
  // Sweep over interval boundaries. Slot 0..8 = Category values; we count active ops per category.
  struct Point {
    double t;
    int cat;
    int delta;
  };
  constexpr int kCats = static_cast<int>(Category::Other) + 1;
  // Sums by category in plain arrays (same order of additions as map entries would see), copied
  // into the maps once: no key string per op.
  std::array<double, kCats> busy{}, exposed{};
  std::array<bool, kCats> busy_seen{}, exposed_seen{};
  std::vector<Point> pts;
  pts.reserve(2 * run.timeline.size());
  for (const auto& t : run.timeline) {
    const StepOp& op =
        program.streams[static_cast<std::size_t>(t.stream)].ops[static_cast<std::size_t>(t.op)];
    const auto c = static_cast<std::size_t>(op.category);
    busy[c] += t.end - t.start;
    busy_seen[c] = true;
    if (t.end <= t.start) continue;
    pts.push_back({t.start, static_cast<int>(op.category), +1});
    pts.push_back({t.end, static_cast<int>(op.category), -1});
  }
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& c) { return a.t < c.t; });
  std::array<int, kCats> active{};
  double prev = 0;
  const double end = run.makespan_s;
  auto account = [&](double from, double to) {
    const double dt = to - from;
    if (dt <= 0) return;
    int comm_kinds = 0, others = 0;
    bool compute = false;
    for (int c = 0; c < kCats; ++c) {
      if (active[static_cast<std::size_t>(c)] <= 0) continue;
      const auto cat = static_cast<Category>(c);
      if (is_compute(cat))
        compute = true;
      else if (is_comm(cat))
        ++comm_kinds;
      else
        ++others;
    }
    if (compute) return;
    if (comm_kinds > 0) {
      for (int c = 0; c < kCats; ++c)
        if (active[static_cast<std::size_t>(c)] > 0 && is_comm(static_cast<Category>(c))) {
          exposed[static_cast<std::size_t>(c)] += dt / comm_kinds;
          exposed_seen[static_cast<std::size_t>(c)] = true;
        }
      b.exposed_comm_total_s += dt;
    } else if (others > 0) {
      b.exposed_kernels_s += dt;
    } else {
      b.compute_idle_s += dt;
    }
  };
  for (const auto& p : pts) {
    account(prev, p.t);
    prev = std::max(prev, p.t);
    active[static_cast<std::size_t>(p.cat)] += p.delta;
  }
  account(prev, end);
  for (int c = 0; c < kCats; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (busy_seen[i]) b.busy_s[to_string(static_cast<Category>(c))] = busy[i];
    if (exposed_seen[i]) b.exposed_comm_s[to_string(static_cast<Category>(c))] = exposed[i];
  }
  return b;
}

}  // namespace zerosim
