// A direct exchange's cost as a function of the cost profile: the analytic tier's time of one
// all_to_all (Algorithm Direct) of one group, split into what its routing fixes once and what the
// profile's values scale. The analytic tier prices the exchange as NCCL's grouped point-to-point
// latency over its slowest pair's hops plus its busiest link's bytes over that link's capacity
// (bandwidth x its class's efficiency) / p2p_efficiency (lower_collective.hpp, analytic_shortcuts).
// Routing every pair is the expensive part (a million pairs at 1024 ranks); here it is done once:
// per link class the busiest link's bytes per byte of the op's size over its bandwidth, and per
// hop shape (the link classes of a transfer's one or two hops) the slowest route's wire latency.
// A profile then prices the op in O(classes + hop shapes): `calibrate fit` evaluates the same
// all_to_all under thousands of profiles. Equal to the analytic tier's time up to rounding (the
// order of a division and a maximum; tests/collectives/test_direct_exchange_cost.cpp).
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace zerosim {

class DirectExchangeCost {
 public:
  // op: an all_to_all of one group whose algorithm selects Direct (InputError otherwise, or on
  // groups lower_collective refuses).
  DirectExchangeCost(const CollectiveOp& op, const Topology& topo);
  // The analytic tier's time of op at `bytes` under profile, with the small-message path
  // (p2p_small_message_s).
  double time_s(const CostProfile& profile, double bytes) const;

 private:
  static constexpr std::size_t kClasses = 3;  // LinkClass values
  struct HopShape {
    int count = 0;
    std::array<LinkClass, 2> cls{};
    double route_latency_s = 0;  // the largest over the shape's pairs of their routes' sum
  };
  CollectiveOp op_;
  const Topology* topo_;
  std::array<double, kClasses> s_per_byte_{};  // per class: max over its links of load / bandwidth
  std::vector<HopShape> shapes_;
  std::vector<std::pair<int, int>> peers_;  // per node: (node peers, network peers)
};

}  // namespace zerosim
