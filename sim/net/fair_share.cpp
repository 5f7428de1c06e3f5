// FairShare: progressive filling with an indexed min-heap of link saturation levels. When a flow
// freezes, the other links it crosses lose its rate and its weight; their level (remaining /
// unfrozen weight) is re-keyed in place.
#include "sim/net/fair_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace zerosim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

int FairShare::add_link(double capacity) {
  if (!(capacity >= 0)) throw std::invalid_argument("FairShare: link capacity must be >= 0");
  cap_.push_back(capacity);
  link_flows_.emplace_back();
  link_mark_.push_back(0);
  link_dirty_.push_back(0);
  rem_.push_back(0);
  wsum_.push_back(0);
  left_.push_back(0);
  key_.push_back(0);
  hpos_.push_back(-1);
  touched_mark_.push_back(0);
  return static_cast<int>(cap_.size()) - 1;
}

void FairShare::set_capacity(int link, double capacity) {
  if (!(capacity >= 0)) throw std::invalid_argument("FairShare: link capacity must be >= 0");
  cap_[link] = capacity;
  if (!link_dirty_[link]) link_dirty_[link] = 1, dirty_.push_back(link);
}

FairShare::FlowId FairShare::add_flow(std::span<const std::int32_t> links, double weight) {
  if (!(weight > 0)) throw std::invalid_argument("FairShare: flow weight must be > 0");
  FlowId f;
  if (!free_ids_.empty()) {
    f = free_ids_.back();
    free_ids_.pop_back();
  } else {
    f = static_cast<FlowId>(alive_.size());
    begin_.push_back(0);
    len_.push_back(0);
    weight_.push_back(0);
    rate_.push_back(0);
    alive_.push_back(0);
    flow_mark_.push_back(0);
    frozen_.push_back(0);
  }
  begin_[f] = static_cast<std::int64_t>(pool_link_.size());
  len_[f] = static_cast<std::int32_t>(links.size());
  weight_[f] = weight;
  rate_[f] = links.empty() ? kInf : 0.0;
  alive_[f] = 1;
  ++active_;
  for (std::int32_t l : links) {
    if (l < 0 || l >= link_count()) throw std::out_of_range("FairShare: flow crosses unknown link");
    pool_link_.push_back(l);
    pool_pos_.push_back(static_cast<std::int32_t>(link_flows_[l].size()));
    link_flows_[l].push_back(f);
    if (!link_dirty_[l]) link_dirty_[l] = 1, dirty_.push_back(l);
  }
  return f;
}

void FairShare::remove_flow(FlowId f) {
  if (!alive(f)) throw std::logic_error("FairShare: removing a flow that is not alive");
  const std::int64_t b = begin_[f];
  for (std::int32_t i = 0; i < len_[f]; ++i) {
    const std::int32_t l = pool_link_[b + i];
    auto& lf = link_flows_[l];
    const std::int32_t pos = pool_pos_[b + i];
    // Swap-remove; the moved entry's back-pointer must follow it. A flow may cross a link more
    // than once (quotient flows, see equitable.hpp), so the entry is found by link AND position.
    const auto last = static_cast<std::int32_t>(lf.size()) - 1;
    const FlowId moved = lf[last];
    lf[pos] = moved;
    lf.pop_back();
    if (pos != last) {
      const std::int64_t mb = begin_[moved];
      for (std::int32_t k = 0; k < len_[moved]; ++k)
        if (pool_link_[mb + k] == l && pool_pos_[mb + k] == last) {
          pool_pos_[mb + k] = pos;
          break;
        }
    }
    if (!link_dirty_[l]) link_dirty_[l] = 1, dirty_.push_back(l);
  }
  pool_garbage_ += static_cast<std::size_t>(len_[f]);
  alive_[f] = 0;
  rate_[f] = 0;
  len_[f] = 0;
  --active_;
  free_ids_.push_back(f);
  if (pool_garbage_ > 4096 && pool_garbage_ * 2 > pool_link_.size()) compact_pool();
}

void FairShare::compact_pool() {
  std::size_t out = 0;
  // Flows were appended in pool order, so live slices keep their relative order when packed left.
  std::vector<FlowId> order;
  order.reserve(active_);
  for (FlowId f = 0; f < flow_capacity(); ++f)
    if (alive_[f]) order.push_back(f);
  std::sort(order.begin(), order.end(), [&](FlowId a, FlowId b) { return begin_[a] < begin_[b]; });
  for (FlowId f : order) {
    const std::int64_t b = begin_[f];
    for (std::int32_t i = 0; i < len_[f]; ++i) {
      pool_link_[out + i] = pool_link_[b + i];
      pool_pos_[out + i] = pool_pos_[b + i];
    }
    begin_[f] = static_cast<std::int64_t>(out);
    out += static_cast<std::size_t>(len_[f]);
  }
  pool_link_.resize(out);
  pool_pos_.resize(out);
  pool_garbage_ = 0;
}

// Breadth-first over link -> flows -> links from every dirty link.
void FairShare::gather_component() {
  ++stamp_;
  comp_links_.clear();
  comp_flows_.clear();
  for (std::int32_t l : dirty_) {
    link_dirty_[l] = 0;
    if (link_mark_[l] == stamp_) continue;
    link_mark_[l] = stamp_;
    comp_links_.push_back(l);
  }
  dirty_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const std::int32_t l = comp_links_[i];
    for (FlowId f : link_flows_[l]) {
      if (flow_mark_[f] == stamp_) continue;
      flow_mark_[f] = stamp_;
      comp_flows_.push_back(f);
      const std::int64_t b = begin_[f];
      for (std::int32_t k = 0; k < len_[f]; ++k) {
        const std::int32_t l2 = pool_link_[b + k];
        if (link_mark_[l2] != stamp_) link_mark_[l2] = stamp_, comp_links_.push_back(l2);
      }
    }
  }
}

// Indexed binary min-heap of links keyed by (level, link id): one entry per link, so re-keying a
// link touched by a saturation costs one sift instead of leaving stale entries behind.
bool FairShare::heap_less(std::int32_t a, std::int32_t b) const {
  return key_[a] != key_[b] ? key_[a] < key_[b] : a < b;
}

void FairShare::sift_up(std::size_t i) {
  const std::int32_t l = heap_[i];
  while (i > 0) {
    const std::size_t p = (i - 1) / 2;
    if (!heap_less(l, heap_[p])) break;
    heap_[i] = heap_[p];
    hpos_[heap_[i]] = static_cast<std::int32_t>(i);
    i = p;
  }
  heap_[i] = l;
  hpos_[l] = static_cast<std::int32_t>(i);
}

void FairShare::sift_down(std::size_t i) {
  const std::int32_t l = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_less(heap_[c + 1], heap_[c])) ++c;
    if (!heap_less(heap_[c], l)) break;
    heap_[i] = heap_[c];
    hpos_[heap_[i]] = static_cast<std::int32_t>(i);
    i = c;
  }
  heap_[i] = l;
  hpos_[l] = static_cast<std::int32_t>(i);
}

void FairShare::fill_component() {
  heap_.clear();
  for (std::int32_t l : comp_links_) {
    rem_[l] = cap_[l];
    double w = 0;
    for (FlowId f : link_flows_[l]) w += weight_[f];
    wsum_[l] = w;
    left_[l] = static_cast<std::int32_t>(link_flows_[l].size());
    hpos_[l] = -1;
    if (left_[l] > 0) {
      key_[l] = rem_[l] / w;
      heap_.push_back(l);
    }
  }
  for (FlowId f : comp_flows_) frozen_[f] = 0;
  for (std::size_t i = 0; i < heap_.size(); ++i) hpos_[heap_[i]] = static_cast<std::int32_t>(i);
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
  double level = 0;
  while (!heap_.empty()) {
    const std::int32_t sat = heap_[0];
    hpos_[sat] = -1;
    heap_[0] = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    if (left_[sat] == 0) continue;
    // Levels are non-decreasing in exact arithmetic; keep them so under rounding.
    level = std::max(level, key_[sat]);
    for (FlowId f : link_flows_[sat]) {
      if (frozen_[f]) continue;
      frozen_[f] = 1;
      const double r = weight_[f] * level;
      rate_[f] = r;
      const std::int64_t b = begin_[f];
      for (std::int32_t k = 0; k < len_[f]; ++k) {
        const std::int32_t l2 = pool_link_[b + k];
        if (--left_[l2] == 0 || l2 == sat) continue;
        rem_[l2] = std::max(0.0, rem_[l2] - r);
        wsum_[l2] -= weight_[f];
        if (!touched_mark_[l2]) touched_mark_[l2] = 1, touched_.push_back(l2);
      }
    }
    left_[sat] = 0;
    // Re-key each touched link once per saturation, not once per frozen flow.
    for (std::int32_t l2 : touched_) {
      touched_mark_[l2] = 0;
      const std::int32_t pos = hpos_[l2];
      if (pos < 0 || left_[l2] == 0) continue;  // done links are skipped when they surface
      const double old = key_[l2];
      key_[l2] = rem_[l2] / wsum_[l2];
      if (key_[l2] < old) {
        sift_up(static_cast<std::size_t>(pos));
      } else {
        sift_down(static_cast<std::size_t>(pos));
      }
    }
    touched_.clear();
  }
}

const std::vector<FairShare::FlowId>& FairShare::solve() {
  gather_component();
  fill_component();
  return comp_flows_;
}

const std::vector<FairShare::FlowId>& FairShare::solve_all() {
  for (int l = 0; l < link_count(); ++l)
    if (!link_dirty_[l]) link_dirty_[l] = 1, dirty_.push_back(l);
  return solve();
}

double FairShare::load(int link) const {
  double s = 0;
  for (FlowId f : link_flows_[link]) s += rate_[f];
  return s;
}

}  // namespace zerosim
