// compute_breakdown: busy sums stream by stream, each in op order; the exposed, kernel-exposed and
// idle times come from the gaps in compute only. An interval between consecutive boundaries of the
// timeline's ops adds to those sums only when no compute op runs, and no compute op has a boundary
// strictly inside a gap of the union of compute ops, so sweeping the other ops' boundaries inside
// each gap accounts exactly the intervals (same end points, same order of additions) that a sweep
// over every boundary of the step would: most boundaries fall while compute runs and cost no sweep.
#include "sim/step/breakdown.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <vector>

namespace zerosim {

namespace {

// Work on the compute stream's critical path: time in it is never exposed communication.
constexpr bool is_compute(Category c) {
  return c == Category::Compute || c == Category::Recompute || c == Category::Optimizer;
}
// The collective kinds: each exposed time is a sum of its own, so they are summed in any order.
constexpr std::array<Category, 4> kCommCategories = {Category::AllGather, Category::ReduceScatter,
                                                     Category::AllToAll, Category::AllReduce};
constexpr bool is_comm(Category c) {
  return std::find(kCommCategories.begin(), kCommCategories.end(), c) != kCommCategories.end();
}

constexpr bool is_offload(Category c) {
  return c == Category::OffloadCopy || c == Category::NvmeIo || c == Category::HostOptimizer;
}

constexpr int kCats = static_cast<int>(Category::Other) + 1;

struct Span {
  double start, end;
  int cat;
};

// A list of spans sorted by start (and end): a stream's ops of positive length, or the compute ops.
// Written through a raw buffer sized for the worst case (no bound check or growth per span).
struct Spans {
  std::unique_ptr<Span[]> data;
  std::size_t size = 0;
  explicit Spans(std::size_t capacity) : data(new Span[capacity]) {}
  const Span& operator[](std::size_t i) const { return data[i]; }
};

// The sums of the compute gaps, by the classes of what runs meanwhile.
class GapSums {
 public:
  explicit GapSums(StepBreakdown& b) : b_(b) {}

  // Sweeps the spans of `lanes` (each sorted, none of a compute category) over the gap [a, z):
  // every sub-interval between consecutive boundaries adds to the sum of what runs during it.
  // cursor[s]: the first span of lane s that may reach into this gap or a later one (advanced).
  void gap(double a, double z, const std::vector<Spans>& lanes, std::size_t S,
           std::vector<std::size_t>& cursor) {
    // Only the lanes with a boundary inside the gap take part (most gaps have one or two): the
    // next boundary is the earliest of theirs, ties to the lowest lane, as over all lanes.
    heads_.resize(S);
    live_.clear();
    for (std::size_t s = 0; s < S; ++s) {
      const auto& lane = lanes[s];
      std::size_t& c = cursor[s];
      while (c < lane.size && lane[c].end <= a) ++c;
      if (c < lane.size && lane[c].start < z) {
        heads_[s] = {c, std::max(lane[c].start, a), false};
        live_.push_back(s);
      }
    }
    prev_ = a;
    while (!live_.empty()) {
      std::size_t j = 0;
      for (std::size_t k = 1; k < live_.size(); ++k)
        if (heads_[live_[k]].t < heads_[live_[j]].t) j = k;
      const std::size_t s = live_[j];
      Head& h = heads_[s];
      const auto& lane = lanes[s];
      account(h.t);
      const int cat = lane[h.i].cat;
      if (h.at_end) {
        activate(cat, -1);
        ++h.i;
        h.at_end = false;
        h.t = h.i < lane.size && lane[h.i].start < z ? lane[h.i].start : kDone;
        if (h.t == kDone) live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(j));
      } else {
        activate(cat, +1);
        h.at_end = true;
        h.t = std::min(lane[h.i].end, z);
      }
    }
    account(z);
    // Spans that reach past z stay active into the next gap; they are re-entered from the cursor.
    active_.fill(0);
    comm_kinds_ = offload_ = fetch_ = others_ = 0;
  }

  std::array<double, kCats> exposed{};
  std::array<bool, kCats> exposed_seen{};

 private:
  static constexpr double kDone = std::numeric_limits<double>::infinity();
  struct Head {
    std::size_t i = 0;  // current span
    double t = kDone;   // time of the next boundary
    bool at_end = false;
  };

  void account(double to) {
    const double dt = to - prev_;
    if (dt <= 0) return;
    prev_ = to;
    if (comm_kinds_ > 0) {
      for (const Category cat : kCommCategories) {
        const auto c = static_cast<std::size_t>(cat);
        if (active_[c] > 0) {
          exposed[c] += dt / comm_kinds_;
          exposed_seen[c] = true;
        }
      }
      b_.exposed_comm_total_s += dt;
    } else if (offload_ > 0) {
      b_.exposed_offload_s += dt;
    } else if (fetch_ > 0) {
      b_.exposed_fetch_s += dt;
    } else if (others_ > 0) {
      b_.exposed_kernels_s += dt;
    } else {
      b_.compute_idle_s += dt;
    }
  }
  void activate(int cat, int delta) {
    int& a = active_[static_cast<std::size_t>(cat)];
    const bool was = a > 0;
    a += delta;
    if (was == (a > 0)) return;
    const auto c = static_cast<Category>(cat);
    (is_comm(c)                  ? comm_kinds_
     : is_offload(c)             ? offload_
     : c == Category::ParamFetch ? fetch_
                                 : others_) += a > 0 ? 1 : -1;
  }

  StepBreakdown& b_;
  std::vector<Head> heads_;
  std::vector<std::size_t> live_;  // lanes with a boundary left in the gap, in lane order
  std::array<int, kCats> active_{};
  int comm_kinds_ = 0, offload_ = 0, fetch_ = 0, others_ = 0;
  double prev_ = 0;
};

}  // namespace

StepBreakdown compute_breakdown(const StepProgram& program, const RunResult& run) {
  StepBreakdown b;
  // Sums by category in plain arrays (same order of additions as map entries would see), copied
  // into the maps once: no key string per op.
  std::array<double, kCats> busy{};
  std::array<bool, kCats> busy_seen{};
  // Ops of positive length: the others per stream (lanes 0..S-1), the compute ones (lane S).
  // Within a stream ops run one after another (start <= end <= next start), so each list is
  // sorted. The loop has no branch on the op: streams interleave categories irregularly, and
  // branching on them was mispredicted often.
  const std::size_t S = program.streams.size();
  std::vector<Spans> lanes;
  lanes.reserve(S + 1);
  std::size_t timed = 0;
  for (std::size_t k = 0; k < S; ++k) {
    lanes.emplace_back(run.lanes[k].size());
    timed += run.lanes[k].size();
  }
  lanes.emplace_back(timed);
  constexpr auto compute_table = [] {
    std::array<bool, kCats> t{};
    for (int c = 0; c < kCats; ++c) t[static_cast<std::size_t>(c)] = is_compute(Category(c));
    return t;
  }();
  int compute_streams = 0;  // streams with compute ops: their union needs a sort if several
  for (std::size_t s = 0; s < S; ++s) {
    const StepOp* ops = program.streams[s].ops.data();
    const std::size_t before = lanes[S].size;
    for (const OpTiming& t : run.lanes[s]) {
      const auto c = static_cast<std::size_t>(ops[t.op].category);
      busy[c] += t.end - t.start;
      busy_seen[c] = true;
      Spans& lane = lanes[compute_table[c] ? S : s];
      lane.data[lane.size] = Span{t.start, t.end, static_cast<int>(c)};
      lane.size += t.end > t.start;
    }
    compute_streams += lanes[S].size > before;
  }
  Spans& compute = lanes[S];
  if (compute_streams > 1)
    std::sort(compute.data.get(), compute.data.get() + compute.size,
              [](const Span& x, const Span& y) { return x.start < y.start; });
  // Gaps of the union of compute ops within [0, makespan].
  GapSums sums(b);
  std::vector<std::size_t> cursor(S, 0);
  double covered = 0;  // compute runs up to here (or nothing has been seen yet)
  std::size_t i = 0;
  while (i < compute.size) {
    if (compute[i].start > covered) sums.gap(covered, compute[i].start, lanes, S, cursor);
    double reach = compute[i].end;
    for (++i; i < compute.size && compute[i].start <= reach; ++i)
      reach = std::max(reach, compute[i].end);
    covered = std::max(covered, reach);
  }
  if (run.makespan_s > covered) sums.gap(covered, run.makespan_s, lanes, S, cursor);
  for (int c = 0; c < kCats; ++c) {
    const auto k = static_cast<std::size_t>(c);
    if (busy_seen[k]) b.busy_s[to_string(static_cast<Category>(c))] = busy[k];
    if (sums.exposed_seen[k])
      b.exposed_comm_s[to_string(static_cast<Category>(c))] = sums.exposed[k];
  }
  return b;
}

}  // namespace zerosim
