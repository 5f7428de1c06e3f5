#include "sim/step/breakdown.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "sim/core/merge_lanes.hpp"

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
  // Within a stream ops run one after another (start <= end <= next start), so each stream's
  // points are sorted already: merge the streams instead of sorting. The order among points of
  // equal time does not matter (the interval between them is empty).
  std::vector<std::vector<Point>> lanes(program.streams.size());
  for (std::size_t s = 0; s < lanes.size(); ++s)
    lanes[s].reserve(2 * program.streams[s].ops.size());
  for (const auto& t : run.timeline) {
    const StepOp& op =
        program.streams[static_cast<std::size_t>(t.stream)].ops[static_cast<std::size_t>(t.op)];
    const auto c = static_cast<std::size_t>(op.category);
    busy[c] += t.end - t.start;
    busy_seen[c] = true;
    if (t.end <= t.start) continue;
    auto& lane = lanes[static_cast<std::size_t>(t.stream)];
    lane.push_back({t.start, static_cast<int>(op.category), +1});
    lane.push_back({t.end, static_cast<int>(op.category), -1});
  }
  const std::vector<Point> pts =
      merge_lanes(std::move(lanes), [](const Point& x, const Point& y) { return x.t < y.t; });
  // Active ops per category, and how many categories of each class are active, kept up to date
  // so that accounting an interval is O(1) unless communication is exposed.
  std::array<int, kCats> active{};
  int computing = 0, comm_kinds = 0, others = 0;
  double prev = 0;
  const double end = run.makespan_s;
  auto account = [&](double from, double to) {
    const double dt = to - from;
    if (dt <= 0 || computing > 0) return;
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
  auto activate = [&](int cat, int delta) {
    int& a = active[static_cast<std::size_t>(cat)];
    const bool was = a > 0;
    a += delta;
    if (was == (a > 0)) return;
    const int step = a > 0 ? 1 : -1;
    const auto c = static_cast<Category>(cat);
    (is_compute(c) ? computing : is_comm(c) ? comm_kinds : others) += step;
  };
  for (const auto& p : pts) {
    account(prev, p.t);
    prev = std::max(prev, p.t);
    activate(p.cat, p.delta);
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
