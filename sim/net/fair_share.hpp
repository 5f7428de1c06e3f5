// FairShare: a standalone max-min fair bandwidth solver (no topology code). Links have capacities;
// a flow crosses a list of links and carries a weight w (an aggregate of w identical flows, which
// together receive w times one flow's share). Rates come from progressive filling: all unfrozen
// flows rise at the same per-unit level; when a link saturates, the flows crossing it freeze at
// rate = weight x level. The solution is the unique max-min fair allocation.
// A link may appear k times in a flow's list: it then carries k x the flow's rate (quotient flows
// of equitable.hpp).
//
// Incremental: add_flow / remove_flow / set_capacity mark links dirty; solve() recomputes only the
// connected components (flows linked through shared links) that contain a dirty link and returns
// the flows it recomputed. Flow ids are reused after removal. No allocation in the steady state
// once the buffers have grown to the working-set size.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace zerosim {

class FairShare {
 public:
  using FlowId = std::int32_t;

  // Links are numbered 0.. in order of creation.
  int add_link(double capacity);
  void set_capacity(int link, double capacity);
  double capacity(int link) const { return cap_[link]; }
  int link_count() const { return static_cast<int>(cap_.size()); }

  // A flow with no links is unconstrained: its rate is +infinity.
  FlowId add_flow(std::span<const std::int32_t> links, double weight = 1.0);
  void remove_flow(FlowId f);
  bool alive(FlowId f) const { return f >= 0 && f < flow_capacity() && alive_[f]; }
  double weight(FlowId f) const { return weight_[f]; }
  std::span<const std::int32_t> links(FlowId f) const {
    return {pool_link_.data() + begin_[f], static_cast<std::size_t>(len_[f])};
  }
  // Rate after the last solve() (0 for a flow added since).
  double rate(FlowId f) const { return rate_[f]; }
  // Upper bound (exclusive) of flow ids in use; size parallel arrays with it.
  FlowId flow_capacity() const { return static_cast<FlowId>(alive_.size()); }
  std::size_t active_flows() const { return active_; }

  // Recomputes the components touched since the last solve; returns their live flows.
  const std::vector<FlowId>& solve();
  // Recomputes everything (for tests: must equal the incremental result).
  const std::vector<FlowId>& solve_all();
  // Total allocated rate on a link after the last solve (for tests and stats).
  double load(int link) const;

 private:
  void gather_component();
  void fill_component();
  void compact_pool();
  bool heap_less(std::int32_t a, std::int32_t b) const;
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  // Links.
  std::vector<double> cap_;
  std::vector<std::vector<FlowId>> link_flows_;
  std::vector<std::int32_t> link_mark_;  // component stamp
  std::vector<char> link_dirty_;
  std::vector<std::int32_t> dirty_;

  // Flows (structure of arrays); links of flow f are pool_link_[begin_[f] .. begin_[f] + len_[f]).
  std::vector<std::int64_t> begin_;
  std::vector<std::int32_t> len_;
  std::vector<double> weight_, rate_;
  std::vector<char> alive_;
  std::vector<std::int32_t> flow_mark_;
  std::vector<FlowId> free_ids_;
  std::size_t active_ = 0;
  std::vector<std::int32_t> pool_link_;
  std::vector<std::int32_t> pool_pos_;  // index of the flow inside link_flows_[link]
  std::size_t pool_garbage_ = 0;

  // Scratch of one solve.
  std::int32_t stamp_ = 0;
  std::vector<std::int32_t> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<double> rem_, wsum_;
  std::vector<std::int32_t> left_;  // unfrozen flows per link
  std::vector<double> key_;         // saturation level of a link in the heap
  std::vector<std::int32_t> hpos_;  // position in heap_, -1 if absent
  std::vector<std::int32_t> heap_;  // link ids
  std::vector<char> touched_mark_;
  std::vector<std::int32_t> touched_;
  std::vector<char> frozen_;
};

}  // namespace zerosim
