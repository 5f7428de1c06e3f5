#include "sim/strategy/fetch_trace.hpp"

#include <algorithm>

namespace zerosim {

std::vector<FetchRun> fetch_trace(const std::vector<Module>& modules, bool checkpointing,
                                  std::int64_t reuse_distance) {
  const int M = static_cast<int>(modules.size());
  std::vector<FetchRun> runs;
  runs.reserve(3 * modules.size());
  for (int i = 0; i < M; ++i) runs.push_back({i, FetchPass::Forward, true});
  for (int i = M - 1; i >= 0;) {
    const Module& m = modules[static_cast<std::size_t>(i)];
    if (!checkpointing || !m.recomputed) {
      runs.push_back({i, FetchPass::Backward, true});
      --i;
      continue;
    }
    // The checkpointed layer holding module i: its recomputed submodules i0..i.
    int i0 = i;
    while (i0 > 0 && modules[static_cast<std::size_t>(i0 - 1)].recomputed &&
           modules[static_cast<std::size_t>(i0 - 1)].layer == m.layer)
      --i0;
    for (int k = i0; k <= i; ++k) runs.push_back({k, FetchPass::Recompute, true});
    for (int k = i; k >= i0; --k) runs.push_back({k, FetchPass::Backward, true});
    i = i0 - 1;
  }
  // before[t]: parameters run before run t; last[m]: module m's latest run so far.
  std::vector<std::int64_t> before(runs.size() + 1, 0);
  for (std::size_t t = 0; t < runs.size(); ++t)
    before[t + 1] = before[t] + modules[static_cast<std::size_t>(runs[t].module)].gather_elems;
  std::vector<std::ptrdiff_t> last(modules.size(), -1);
  for (std::size_t t = 0; t < runs.size(); ++t) {
    const auto m = static_cast<std::size_t>(runs[t].module);
    if (last[m] >= 0) {
      const auto p = static_cast<std::size_t>(last[m]);
      runs[t].gather = before[t] - before[p + 1] >= reuse_distance;
    }
    last[m] = static_cast<std::ptrdiff_t>(t);
  }
  return runs;
}

std::vector<std::int64_t> held_elems(const std::vector<FetchRun>& runs,
                                     const std::vector<Module>& modules) {
  auto elems = [&](const FetchRun& r) {
    return modules[static_cast<std::size_t>(r.module)].gather_elems;
  };
  // kept[t]: weights held across run t for a later run (a difference array over the runs).
  std::vector<std::int64_t> kept(runs.size() + 1, 0);
  std::vector<std::ptrdiff_t> last(modules.size(), -1);
  for (std::size_t t = 0; t < runs.size(); ++t) {
    const auto m = static_cast<std::size_t>(runs[t].module);
    if (!runs[t].gather && last[m] >= 0) {
      kept[static_cast<std::size_t>(last[m]) + 1] += elems(runs[t]);
      kept[t] -= elems(runs[t]);
    }
    last[m] = static_cast<std::ptrdiff_t>(t);
  }
  std::vector<std::int64_t> held(runs.size());
  std::int64_t across = 0;
  for (std::size_t t = 0; t < runs.size(); ++t) {
    across += kept[t];
    held[t] = across + elems(runs[t]);
  }
  return held;
}

std::int64_t borrowed_elems(const Module& m) {
  std::int64_t own = 0;
  for (const ParamTensor& p : m.params) own += p.elems;
  return std::max<std::int64_t>(0, m.gather_elems - own);
}

void append_gathered_tensor_elems(const Module& m, std::vector<std::int64_t>& out) {
  if (const std::int64_t borrowed = borrowed_elems(m); borrowed > 0) out.push_back(borrowed);
  for (const ParamTensor& p : m.params) out.push_back(p.elems);
}

PrefetchPlan prefetch_plan(const FetchRun* runs, const std::int64_t* held, std::size_t count,
                           const std::vector<Module>& modules, std::int64_t bucket_elems,
                           std::int64_t max_live) {
  PrefetchPlan plan;
  // The queue: every run's tensors in trace order.
  plan.first.reserve(count + 1);
  for (std::size_t j = 0; j < count; ++j) {
    plan.first.push_back(plan.elems.size());
    append_gathered_tensor_elems(modules[static_cast<std::size_t>(runs[j].module)], plan.elems);
  }
  plan.first.push_back(plan.elems.size());
  const std::size_t U = plan.elems.size();
  plan.by.assign(U, -1);
  plan.in_flight.assign(count, 0);
  if (bucket_elems <= 0) return plan;
  // prev[j]: the previous run of run j's module in this pass (-1: none).
  std::vector<std::ptrdiff_t> prev(count, -1), last(modules.size(), -1);
  for (std::size_t j = 0; j < count; ++j) {
    auto& l = last[static_cast<std::size_t>(runs[j].module)];
    prev[j] = l;
    l = static_cast<std::ptrdiff_t>(j);
  }
  std::int64_t in_flight = 0;
  std::size_t queue = plan.first[std::min<std::size_t>(1, count)];  // the next tensor not popped
  std::size_t run = 0;                                              // the run of tensor `queue`
  for (std::size_t k = 0; k < count; ++k) {
    for (std::size_t u = plan.first[k]; u < plan.first[k + 1]; ++u)
      if (plan.by[u] >= 0) in_flight -= plan.elems[u];  // prefetched: now held by run k
    queue = std::max(queue, plan.first[k + 1]);         // run k's own tensors are popped
    const std::int64_t room = std::min(bucket_elems, max_live - held[k] - in_flight);
    const auto K = static_cast<std::ptrdiff_t>(k);
    for (std::int64_t started = 0; queue < U && started < room; ++queue) {
      while (plan.first[run + 1] <= queue) ++run;
      if (!runs[run].gather || prev[run] >= K) continue;  // held or in flight
      plan.by[queue] = K;
      started += plan.elems[queue];
      in_flight += plan.elems[queue];
    }
    plan.in_flight[k] = in_flight;
  }
  return plan;
}

std::int64_t max_held_elems(const std::vector<FetchRun>& runs, const std::vector<Module>& modules) {
  const auto held = held_elems(runs, modules);
  return held.empty() ? 0 : *std::max_element(held.begin(), held.end());
}

}  // namespace zerosim
