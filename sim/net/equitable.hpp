// Exact symmetry reduction of the max-min fair flow problem: an equitable partition of
// links and flows. Links are split into classes with equal capacity; the flows of a phase into
// classes with equal bytes and weight, such that
//   (1) every flow of class A crosses the same number k(A, B) of links of each link class B, and
//   (2) every link of class B is crossed by the same number of class-A flows, for every A.
// Then progressive filling treats all members of a class alike (links of a class saturate at the
// same level, flows of a class freeze at the same level), so the unique max-min allocation gives
// them equal rates, and since they start together with equal bytes they stay equal until they all
// finish together. The quotient problem has one flow per class A, of weight |A| x w, crossing each
// link class B k(A, B) times, and one link per class B of capacity |B| x capacity: its level at
// every step equals the full problem's. This holds for ANY union of phases, each equitable with
// respect to the same link partition, so concurrent collectives share one partition.
//
// The partition is found by colour refinement (1-dimensional Weisfeiler-Leman) of the flow/link
// incidence graph on the actual routes, so ECMP choices, odd node counts and asymmetric groups
// simply refine it further (down to single flows and links: the full simulation). The link
// partition only ever gets finer; every refinement bumps version() so phases computed for an older
// partition are refined again before use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zerosim {

// A flow of a resolved phase: its links are links[link_begin, +link_count) of the plan's pool.
struct PlanFlow {
  std::int64_t link_begin = 0;
  std::int32_t link_count = 0;
  bool crosses_nodes = false;
  double bytes = 0;   // of one member
  double weight = 1;  // members merged into this flow (identical link list and bytes)
};

// A phase reduced under the link partition: flows are classes, links are link classes.
struct QuotientPhase {
  std::uint64_t version = ~std::uint64_t{0};  // LinkPartition::version() it was computed for
  std::vector<std::int32_t> class_of;         // per flow of the phase: its class
  std::vector<PlanFlow> flows;    // per class: weight = total of its members; links = link classes
  std::vector<std::int32_t> rep;  // per class: one member (index into the phase's flows)
  std::vector<std::int32_t> links;  // pool of link-class ids (class k(A, B) times per B)
  bool too_fine = false;  // refinement stopped at more than max_classes classes; no quotient
  std::vector<std::int32_t> link_classes;  // distinct link classes the phase's flows cross
};

// One phase of a joint refinement: its flows and link pool, and where its quotient goes.
struct JointPhase {
  std::span<const PlanFlow> flows;
  std::span<const std::int32_t> links;
  QuotientPhase* q = nullptr;
};

class LinkPartition {
 public:
  // Initial classes: links of equal capacity.
  explicit LinkPartition(std::span<const double> capacities);

  std::uint64_t version() const { return version_; }
  int class_count() const { return static_cast<int>(members_.size()); }
  int class_of(int link) const { return class_of_[link]; }
  // Capacity of the quotient link: |B| x one link's capacity.
  double quotient_capacity(int cls) const {
    return static_cast<double>(members_[cls].size()) * capacity_[cls];
  }

  // A quotient computed for an older version stays exact when none of the link classes its flows
  // cross has split since (the others may split freely: the phase crosses none of their links).
  // Then revalidate marks it current and returns true; refine does this check first.
  bool revalidate(QuotientPhase& q) const;

  // Refines the partition (and the phase's flow classes) until the phase is equitable, and stores
  // the phase's quotient in q. Returns true if the link partition changed (other phases must then
  // be refined again). Deterministic: class ids depend only on the inputs.
  // Stops early (q.too_fine, q stale) once the phase has more than max_classes flow classes.
  bool refine(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
              QuotientPhase& q, std::size_t max_classes = SIZE_MAX);

  // Refines several phases together (each phase's flows keep their own classes) until every one is
  // equitable with respect to the common link partition, and stores each phase's quotient. Refining
  // concurrent phases one at a time can take many turns when each splits the link classes the other
  // crosses, one step per turn, and every turn re-refines a whole phase; the joint refinement
  // reaches the same fixed point (the coarsest partition equitable for all of them) in one pass.
  // Stops early (phases[0].q->too_fine, the others stale) once the first phase has more than
  // max_classes classes. Returns true if the link partition changed.
  bool refine_joint(std::span<const JointPhase> phases, std::size_t max_classes = SIZE_MAX);

 private:
  // Colour refinement of flows (initial colours in colour, count_classes of them) to a fixed point
  // with the link partition; colour receives the final classes, numbered in order of first
  // appearance. Sets too_fine and stops once flows [0, first) have more than max_classes classes.
  // since: ~0 for initial colours; else the colours are a partition equitable for the link
  // partition of that version, and only what its later splits touch is looked at again.
  bool run(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
           std::vector<std::int32_t>& colour, std::int32_t count_classes, std::size_t first,
           std::size_t max_classes, bool& too_fine, std::uint64_t since);
  // run's state and steps (equitable.cpp).
  class Refinement;
  // Fills the incidence by link (inc_link_, inc_begin_, inc_flow_, touched_) of the flows.
  void build_incidence(std::span<const PlanFlow> flows, std::span<const std::int32_t> links);
  // Stores the quotient of a phase whose flows have the given (final) colours.
  void store(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
             std::span<const std::int32_t> colour, QuotientPhase& q) const;

  // Splits the given link classes (ascending) by the multiset of flow colours crossing each link
  // (inc_ holds the incidence by link); appends the links that changed class to moved. Returns true
  // if a class split. With `recoloured` (the flows whose colour changed since the links of each
  // class last had equal multisets), only those flows' colours are compared: the rest of each
  // multiset is equal within a class, so the split is the same, and a round costs the recoloured
  // flows' incidences instead of re-sorting every link's full list (Hopcroft's idea).
  bool split_links(const std::vector<std::int32_t>& colour,
                   const std::vector<std::int32_t>& classes, std::span<const PlanFlow> flows,
                   std::span<const std::int32_t> links, const std::vector<std::int32_t>* recoloured,
                   std::vector<std::int32_t>& moved);
  // inc_col_ = every link's signature for split_links: the sorted colours of the flows crossing it
  // (empty if untouched), or with `recoloured`, of those flows only (runs indexed by run_of_).
  void link_signatures(const std::vector<std::int32_t>& colour, std::span<const PlanFlow> flows,
                       std::span<const std::int32_t> links,
                       const std::vector<std::int32_t>* recoloured);

  // by_colour_ = the flows 0..n-1 (or those of subset) in ascending colour, by a counting sort.
  void sort_by_colour(const std::vector<std::int32_t>& colour, std::size_t n,
                      const std::vector<std::int32_t>* subset);

  std::vector<std::int32_t> class_of_;
  std::vector<std::vector<std::int32_t>> members_;  // links of each class, ascending
  std::vector<double> capacity_;                    // one link's capacity, per class
  std::vector<std::uint64_t> split_at_;  // per class: version_ when it last split or was created
  std::uint64_t version_ = 0;
  // Scratch, per refine(): the phase's incidence by link (CSR over links crossed by some flow).
  std::vector<std::int32_t> inc_link_;   // touched links, in order of first touch
  std::vector<std::int64_t> inc_begin_;  // per touched link (and one past): start in inc_flow_
  std::vector<std::int32_t> inc_flow_;   // flows crossing each touched link
  std::vector<std::int32_t> inc_col_;    // per split_links: link signatures (full or recoloured)
  std::vector<std::int32_t> touched_;    // per link: index in inc_link_, or -1
  std::vector<std::size_t> size_;        // per group of a split: its links
  // Scratch, per split_links with recoloured flows: each link's run of their colours, sorted.
  std::vector<std::int32_t> run_links_;  // links with a run, in order of first touch
  std::vector<std::int32_t> run_of_;     // per link: index in run_begin_, or -1
  std::vector<std::int64_t> run_begin_;  // per run (and one past): start in inc_col_
  std::vector<std::int32_t> by_colour_;  // flows in ascending colour (counting sort)
  std::vector<std::int64_t> colour_at_;  // counting sort's offsets per colour
  std::vector<std::int64_t> fill_;       // per list of a counting sort: next free slot
};

}  // namespace zerosim
