// Analytic-tier shortcuts. A collective's analytic time is, per phase, latency + the busiest link's
// bytes / capacity, and every flow's bytes are proportional to op.bytes, so a phase's busiest load
// is op.bytes x (its load per byte). UnitPlan holds those per-byte figures; one is computed per op
// shape (kind, algorithm, groups) and serves every size.
//
// Computing a UnitPlan the plain way lowers the op (with 1 byte) to flows and routes each. The
// rail all-to-all shortcut computes it without flows or cached routes: an all-to-all whose groups
// hold one GPU per node at the same local index (qgZ's inter-node hop), on a fabric of the
// builders' shape (each GPU has one NIC over one link, each NIC one leaf, leaves fully joined to
// spines with uniform latencies). Such a pair's route is fixed except for the spine, which the
// router picks at the source leaf from the destination alone (D-mod-k: route_dest_key,
// topology.hpp), so per-link flow counts follow from the group sizes plus one key per
// cross-leaf pair. Anything else (other ops,
// graphs of another shape, PCIe switches, uneven latencies, overlapping groups) falls back to the
// plain computation. tests/net/test_analytic_shortcuts.cpp checks both agree to 1e-9.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/nccl_model.hpp"
#include "sim/net/network_model.hpp"

namespace zerosim {

// Per link class (LinkClass: NVLink, PCIe, network): the busiest link of that class's seconds per
// byte, the demand the analytic tier shares among concurrent collectives (analytic_network.hpp).
inline constexpr std::size_t kLinkClasses = 3;
using ClassLoads = std::array<double, kLinkClasses>;

struct UnitPlan {
  struct UnitPhase {
    double latency_s = 0;
    double busiest_s_per_byte = 0;  // max over links of (load per byte of op.bytes) / capacity
    ClassLoads class_s_per_byte{};  // the same max per link class (busiest = their max)
  };
  std::vector<UnitPhase> phases;
  NetStats stats_per_byte;  // bytes per byte of op.bytes; flows as counted (not scaled)
  // NCCL's own collectives (is_nccl_collective): the time is NCCL's choice over the patterns'
  // link-limited seconds per byte (nccl_model.hpp), not the phases' sum.
  bool nccl = false;
  CommShape shape;
  std::array<double, kTrafficPatterns> pattern_s_per_byte{};
  // The lowered patterns' per-class busiest seconds per byte (summed over their phases): the ring
  // (every choice but NVLS, as the flow tier lowers it) and NVLS.
  ClassLoads ring_class{}, nvls_class{};

  double time_s(double bytes) const;  // the phases' sum (compositions and all_to_all)
  NetStats stats(double bytes) const;
  NcclChoice nccl_choice(const CollectiveOp& op, const CostProfile& profile) const;
  double nccl_time_s(const CollectiveOp& op, const CostProfile& profile) const;
  // Either: the time of op (of this plan's shape) at op.bytes.
  double op_time_s(const CollectiveOp& op, const CostProfile& profile) const {
    return nccl ? nccl_time_s(op, profile) : time_s(op.bytes);
  }
};

// Links of equal bandwidth and class, so of equal capacity under every profile: per link its
// group, numbered by first appearance in link order.
std::vector<int> capacity_groups(const Topology& topo);

// The half of a UnitPlan that does not depend on link rates: what lowering and routing give at
// op.bytes = 1, before any capacity divides it. A link's seconds per byte is its bytes per byte of
// op.bytes / capacity x wire / over (wire: the phase's wire factor; over: the p2p efficiency the
// rail shortcut divides by; each is 1 where it does not apply, an exact identity). Every step of
// that is a correctly rounded operation by a positive number, so it keeps the order of the bytes:
// among links of equal capacity the busiest is the one with the most bytes, and a phase keeps per
// capacity group (capacity_groups) only that link's bytes. The plan of a fabric whose capacity
// groups are the same (a sweep's NIC rates, other class efficiencies) is unit_plan(loads, its
// capacities), equal to the plain computation's, with no lowering or routing again.
struct LinkLoads {
  struct Load {
    LinkId link = 0;  // a link of the group (all have its capacity)
    LinkClass cls = LinkClass::Network;
    double bytes = 0;  // the most bytes per byte of op.bytes on a link of the group, > 0
  };
  struct Phase {
    double latency_s = 0;
    double wire = 1, over = 1;
    std::vector<Load> loads;  // one per capacity group the phase's flows cross
  };
  std::vector<Phase> ring;  // the ring pattern, as the flow tier lowers every op
  std::vector<Phase> nvls;  // NVLS inside every node (NCCL's all-reduce, when has_nvls)
  bool has_nvls = false;
  NetStats stats_per_byte;  // as UnitPlan's
  bool nccl = false;
  CommShape shape;
};

// Per-link effective capacity (bytes/s): bandwidth x the profile's class efficiency.
std::vector<double> link_capacities(const Topology& topo, const CostProfile& profile);

// The rate application: loads' plan with these capacities, those of a fabric with loads' graph
// and capacity groups (equal capacities within each group).
UnitPlan unit_plan(const LinkLoads& loads, const std::vector<double>& capacity);

// The loads of unit_plan_by_flows and rail_all_to_all_plan (below), and of unit_plan (the
// shortcut if it applies, else the plain computation folded where it can be). groups:
// capacity_groups(topo), computed here when null.
LinkLoads link_loads_by_flows(const CollectiveOp& op, const Topology& topo,
                              const CostProfile& profile, bool fold = false,
                              const std::vector<int>* groups = nullptr);
std::optional<LinkLoads> rail_all_to_all_loads(const CollectiveOp& op, const Topology& topo,
                                               const CostProfile& profile,
                                               const std::vector<int>* groups = nullptr);
LinkLoads link_loads(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                     const std::vector<int>* groups = nullptr);

// The plain computation: lowers op's ring pattern (and NVLS patterns where they apply) with
// op.bytes = 1 and sums per-link loads per phase.
// fold: when the cluster has a block rotation that maps op's groups onto themselves, lower only
// block 0's sources and sum their loads on the block-0 images of their links (every real link's
// load is its image's); used only where each phase's flows all carry equal bytes, so that every
// sum adds the same values as the unfolded one (in another order: equal values, the same result).
UnitPlan unit_plan_by_flows(const CollectiveOp& op, const Topology& topo,
                            const CostProfile& profile, const std::vector<double>& capacity,
                            bool fold = false);

// The rail all-to-all shortcut, or nullopt when it does not apply (see above). Validates op like
// lower_collective (InputError on bad groups).
std::optional<UnitPlan> rail_all_to_all_plan(const CollectiveOp& op, const Topology& topo,
                                             const CostProfile& profile,
                                             const std::vector<double>& capacity);

// Shortcut if one applies, else the plain computation (folded where it can be).
// NetworkOptions::analytic_shortcuts = false makes AnalyticNetwork skip all of this (see
// analytic_network.hpp).
UnitPlan unit_plan(const CollectiveOp& op, const Topology& topo, const CostProfile& profile,
                   const std::vector<double>& capacity);

}  // namespace zerosim
