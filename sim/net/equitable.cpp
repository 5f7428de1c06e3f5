// Colour refinement of one phase's flow/link incidence against the global link partition.
//
// Each round groups the flows by (colour, sorted classes of their links), then the links of each
// class by the sorted colours of the flows crossing them (the incidence by link is built once per
// refine call). After the first round both sides look only at what changed, as in Hopcroft's
// partition refinement: a flow is regrouped only if it crosses a link that changed class, by the
// new classes of those links alone, and a link class is split by the colours of the recoloured
// flows alone (the rest of each signature is equal within a class by the previous round). A class
// that splits keeps its id for its largest group when it can, so fewer members are recoloured.
// Groups are found by hashing a signature and comparing it exactly with the first member of the
// group it hashes to, and numbered in order of first appearance, so class ids depend only on the
// inputs; test_equitable checks the result against plain full-signature rounds.
#include "sim/net/equitable.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>
#include <utility>

namespace zerosim {

LinkPartition::LinkPartition(std::span<const double> capacities)
    : class_of_(capacities.size()),
      touched_(capacities.size(), -1),
      run_of_(capacities.size(), -1) {
  std::map<double, std::int32_t> by_cap;
  for (std::size_t l = 0; l < capacities.size(); ++l) {
    auto [it, fresh] =
        by_cap.try_emplace(capacities[l], static_cast<std::int32_t>(members_.size()));
    if (fresh) {
      members_.emplace_back();
      capacity_.push_back(capacities[l]);
      split_at_.push_back(0);
    }
    class_of_[l] = it->second;
    members_[it->second].push_back(static_cast<std::int32_t>(l));
  }
}

namespace {

template <class It>
std::uint64_t hash_range(It a, It b) {
  std::uint64_t h = static_cast<std::uint64_t>(b - a);
  for (; a != b; ++a) {
    h ^= static_cast<std::uint32_t>(*a) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64 finaliser
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// Numbers items 0..n-1 by equality class in order of first appearance: id[i] = its group. hash(i)
// must be equal for equal items; same(a, b) decides equality exactly. Returns the group count.
class Grouper {
 public:
  template <class Hash, class Same>
  std::int32_t run(std::size_t n, std::vector<std::int32_t>& id, Hash hash, Same same) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    slot_.assign(cap, -1);
    hash_.resize(n);
    id.resize(n);
    std::int32_t groups = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t h = hash(i);
      hash_[i] = h;
      for (std::size_t s = h & (cap - 1);; s = (s + 1) & (cap - 1)) {
        const std::int32_t r = slot_[s];
        if (r < 0) {
          slot_[s] = static_cast<std::int32_t>(i);
          id[i] = groups++;
          break;
        }
        if (hash_[r] == h && same(static_cast<std::size_t>(r), i)) {
          id[i] = id[r];
          break;
        }
      }
    }
    return groups;
  }

 private:
  std::vector<std::int32_t> slot_;  // representative item, -1 if empty
  std::vector<std::uint64_t> hash_;
};

}  // namespace

void LinkPartition::sort_by_colour(const std::vector<std::int32_t>& colour, std::size_t n,
                                   const std::vector<std::int32_t>* subset) {
  auto each = [&](auto&& f) {
    if (subset)
      for (std::int32_t i : *subset) f(i);
    else
      for (std::size_t i = 0; i < n; ++i) f(static_cast<std::int32_t>(i));
  };
  by_colour_.clear();
  std::int32_t lo = INT32_MAX, hi = -1;
  each([&](std::int32_t i) {
    lo = std::min(lo, colour[i]);
    hi = std::max(hi, colour[i]);
  });
  if (hi < lo) return;
  colour_at_.assign(static_cast<std::size_t>(hi - lo) + 2, 0);
  each([&](std::int32_t i) { ++colour_at_[static_cast<std::size_t>(colour[i] - lo) + 1]; });
  for (std::size_t c = 1; c < colour_at_.size(); ++c) colour_at_[c] += colour_at_[c - 1];
  by_colour_.resize(static_cast<std::size_t>(colour_at_.back()));
  each([&](std::int32_t i) {
    by_colour_[static_cast<std::size_t>(colour_at_[static_cast<std::size_t>(colour[i] - lo)]++)] =
        i;
  });
}

void LinkPartition::link_signatures(const std::vector<std::int32_t>& colour,
                                    std::span<const PlanFlow> flows,
                                    std::span<const std::int32_t> links,
                                    const std::vector<std::int32_t>* recoloured) {
  // Both kinds are filled from the flows in ascending colour, so each link's list comes out
  // sorted.
  sort_by_colour(colour, flows.size(), recoloured);
  if (recoloured == nullptr) {
    inc_col_.resize(inc_flow_.size());
    fill_.assign(inc_begin_.begin(), inc_begin_.end() - 1);
    for (std::int32_t i : by_colour_) {
      const PlanFlow& f = flows[i];
      for (std::int32_t k = 0; k < f.link_count; ++k)
        inc_col_[fill_[touched_[links[f.link_begin + k]]]++] = colour[i];
    }
  } else {
    // Counting sort by link (runs numbered in order of first touch), filled in colour order.
    run_links_.clear();
    run_begin_.clear();
    for (std::int32_t i : *recoloured) {
      const PlanFlow& f = flows[i];
      for (std::int32_t k = 0; k < f.link_count; ++k) {
        std::int32_t& r = run_of_[links[f.link_begin + k]];
        if (r < 0) {
          r = static_cast<std::int32_t>(run_links_.size());
          run_links_.push_back(links[f.link_begin + k]);
          run_begin_.push_back(0);
        }
        ++run_begin_[r];
      }
    }
    std::int64_t at = 0;
    for (std::int64_t& b : run_begin_) at += std::exchange(b, at);
    run_begin_.push_back(at);
    inc_col_.resize(static_cast<std::size_t>(at));
    fill_.assign(run_begin_.begin(), run_begin_.end() - 1);
    for (std::int32_t i : by_colour_) {
      const PlanFlow& f = flows[i];
      for (std::int32_t k = 0; k < f.link_count; ++k)
        inc_col_[fill_[run_of_[links[f.link_begin + k]]]++] = colour[i];
    }
  }
}

bool LinkPartition::split_links(const std::vector<std::int32_t>& colour,
                                const std::vector<std::int32_t>& classes,
                                std::span<const PlanFlow> flows,
                                std::span<const std::int32_t> links,
                                const std::vector<std::int32_t>* recoloured,
                                std::vector<std::int32_t>& moved) {
  link_signatures(colour, flows, links, recoloured);
  const bool full = recoloured == nullptr;
  auto seg = [&](std::int32_t l) {
    const std::int32_t t = full ? touched_[l] : run_of_[l];
    if (t < 0) return std::pair(inc_col_.begin(), inc_col_.begin());
    const std::vector<std::int64_t>& at = full ? inc_begin_ : run_begin_;
    return std::pair(inc_col_.begin() + at[t], inc_col_.begin() + at[t + 1]);
  };

  bool split = false;
  Grouper grouper;
  std::vector<std::int32_t> group;
  for (std::int32_t b : classes) {
    if (members_[b].size() < 2) continue;
    const std::vector<std::int32_t> m = members_[b];
    const std::int32_t groups = grouper.run(
        m.size(), group,
        [&](std::size_t k) {
          auto [x, y] = seg(m[k]);
          return hash_range(x, y);
        },
        [&](std::size_t a, std::size_t k) {
          auto [x0, x1] = seg(m[a]);
          auto [y0, y1] = seg(m[k]);
          return std::equal(x0, x1, y0, y1);
        });
    if (groups == 1) continue;
    split = true;
    // The largest group (the first of equal ones) keeps id b, so the fewest links change class;
    // the others are new, in order.
    size_.assign(static_cast<std::size_t>(groups), 0);
    for (std::int32_t g : group) ++size_[g];
    const auto keep =
        static_cast<std::int32_t>(std::max_element(size_.begin(), size_.end()) - size_.begin());
    const auto first_new = static_cast<std::int32_t>(members_.size());
    split_at_[b] = version_ + 1;
    for (std::int32_t g = 1; g < groups; ++g) {
      members_.emplace_back();
      capacity_.push_back(capacity_[b]);
      split_at_.push_back(version_ + 1);
    }
    members_[b].clear();
    for (std::size_t k = 0; k < m.size(); ++k) {
      const std::int32_t g = group[k];
      const std::int32_t id = g == keep ? b : first_new + (g < keep ? g : g - 1);
      class_of_[m[k]] = id;
      members_[id].push_back(m[k]);
      if (g != keep) moved.push_back(m[k]);
    }
  }
  if (!full)
    for (std::int32_t l : run_links_) run_of_[l] = -1;
  if (split) ++version_;
  return split;
}

bool LinkPartition::revalidate(QuotientPhase& q) const {
  if (q.version == ~std::uint64_t{0} || q.too_fine) return false;
  if (q.version == version_) return true;
  for (std::int32_t c : q.link_classes)
    if (split_at_[c] > q.version) return false;
  q.version = version_;
  return true;
}

bool LinkPartition::refine(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
                           QuotientPhase& q, std::size_t max_classes) {
  if (revalidate(q)) return false;
  bool too_fine = false;
  // Starting colours: a stale quotient's classes (they were equitable for a coarser link
  // partition, so the finest partition equitable for this one refines them), else (bytes, weight,
  // crosses_nodes).
  const bool warm =
      q.version != ~std::uint64_t{0} && !q.too_fine && q.class_of.size() == flows.size();
  std::vector<std::int32_t> colour;
  std::int32_t colours = 0;
  if (warm) {
    colour = q.class_of;
    colours = static_cast<std::int32_t>(q.flows.size());
  } else {
    colour.resize(flows.size());
    std::map<std::tuple<double, double, bool>, std::int32_t> initial;
    for (std::size_t i = 0; i < flows.size(); ++i)
      colour[i] = initial
                      .try_emplace({flows[i].bytes, flows[i].weight, flows[i].crosses_nodes},
                                   static_cast<std::int32_t>(initial.size()))
                      .first->second;
    colours = static_cast<std::int32_t>(initial.size());
  }
  const bool changed = run(flows, links, colour, colours, flows.size(), max_classes, too_fine,
                           warm ? q.version : ~std::uint64_t{0});
  if (too_fine) {
    q = QuotientPhase{};
    q.too_fine = true;
    return changed;
  }
  store(flows, links, std::span<const std::int32_t>(colour), q);
  return changed;
}

bool LinkPartition::refine_joint(std::span<const JointPhase> phases, std::size_t max_classes) {
  // One flow list: the phases' flows in order, their link lists copied into one pool.
  std::vector<PlanFlow> flows;
  std::vector<std::int32_t> links;
  std::size_t total = 0, pool = 0;
  for (const JointPhase& ph : phases) {
    total += ph.flows.size();
    for (const PlanFlow& f : ph.flows) pool += static_cast<std::size_t>(f.link_count);
  }
  flows.reserve(total);
  links.reserve(pool);
  // Initial colours: (phase, bytes, weight, crosses_nodes), so no class mixes phases.
  std::vector<std::int32_t> colour;
  colour.reserve(total);
  std::map<std::tuple<std::size_t, double, double, bool>, std::int32_t> initial;
  for (std::size_t p = 0; p < phases.size(); ++p)
    for (const PlanFlow& f : phases[p].flows) {
      PlanFlow g = f;
      g.link_begin = static_cast<std::int64_t>(links.size());
      links.insert(links.end(), phases[p].links.begin() + f.link_begin,
                   phases[p].links.begin() + f.link_begin + f.link_count);
      flows.push_back(g);
      colour.push_back(initial
                           .try_emplace({p, f.bytes, f.weight, f.crosses_nodes},
                                        static_cast<std::int32_t>(initial.size()))
                           .first->second);
    }
  bool too_fine = false;
  const bool changed =
      run(flows, links, colour, static_cast<std::int32_t>(initial.size()),
          phases.empty() ? 0 : phases[0].flows.size(), max_classes, too_fine, ~std::uint64_t{0});
  if (too_fine) {
    *phases[0].q = QuotientPhase{};
    phases[0].q->too_fine = true;
    return changed;
  }
  std::size_t at = 0;
  for (const JointPhase& ph : phases) {
    store(ph.flows, ph.links, std::span<const std::int32_t>(colour).subspan(at, ph.flows.size()),
          *ph.q);
    at += ph.flows.size();
  }
  return changed;
}

void LinkPartition::build_incidence(std::span<const PlanFlow> flows,
                                    std::span<const std::int32_t> links) {
  // Incidence by link, in flow order (a flow crossing a link twice is listed twice).
  const std::size_t n = flows.size();
  inc_link_.clear();
  std::vector<std::int64_t> count;
  for (std::size_t i = 0; i < n; ++i)
    for (std::int32_t k = 0; k < flows[i].link_count; ++k) {
      const std::int32_t l = links[flows[i].link_begin + k];
      if (touched_[l] < 0) {
        touched_[l] = static_cast<std::int32_t>(inc_link_.size());
        inc_link_.push_back(l);
        count.push_back(0);
      }
      ++count[touched_[l]];
    }
  inc_begin_.assign(inc_link_.size() + 1, 0);
  for (std::size_t t = 0; t < inc_link_.size(); ++t) inc_begin_[t + 1] = inc_begin_[t] + count[t];
  inc_flow_.resize(static_cast<std::size_t>(inc_begin_.back()));
  for (std::size_t t = 0; t < inc_link_.size(); ++t) count[t] = inc_begin_[t];
  for (std::size_t i = 0; i < n; ++i)
    for (std::int32_t k = 0; k < flows[i].link_count; ++k)
      inc_flow_[count[touched_[links[flows[i].link_begin + k]]]++] = static_cast<std::int32_t>(i);
}

// One run(): the flow classes being refined and each round's work lists. Flow classes keep their
// ids while refining (a class that splits keeps its id for one group; the others get new ids), so
// a round only regroups the classes of flows that cross a link whose class changed, and only
// splits the link classes of links crossed by a flow whose class changed; the sequence of
// partitions is the same as regrouping everything.
class LinkPartition::Refinement {
 public:
  Refinement(LinkPartition& part, std::span<const PlanFlow> flows,
             std::span<const std::int32_t> links, std::vector<std::int32_t>& colour,
             std::int32_t count_classes, std::size_t first, std::uint64_t since);

  // Rounds until no link class splits; see LinkPartition::run.
  bool run(std::size_t max_classes, bool& too_fine);

 private:
  void seed(std::uint64_t since);
  void mark_crossing(std::int32_t l);
  void regroup_all();
  void regroup_dirty();
  void sort_dirty_by_class();
  void regroup(std::int32_t c, bool pinned);
  void flow_signatures();
  void collect_link_classes();
  void moved_link_signatures();

  LinkPartition& p_;
  std::span<const PlanFlow> flows_;
  std::span<const std::int32_t> links_;
  std::vector<std::int32_t>& colour_;
  std::size_t first_;
  std::vector<std::vector<std::int32_t>> fmem_;  // flows of each class
  std::size_t first_classes_ = 0;                // classes of flows [0, first)
  bool all_;  // this round regroups every class (a cold start's first round)
  // dirty: the flows to look at this round, each once.
  std::vector<std::int32_t> dirty_;
  std::vector<char> is_dirty_;
  std::vector<std::int32_t> dirty_pos_;  // per dirty flow: its index in dirty_
  std::vector<std::int32_t> moved_flows_, moved_links_, seeded_;
  std::vector<std::int32_t> lclasses_;  // the link classes to split this round, ascending
  std::vector<char> lclass_seen_;
  // After the first round, the flows of a class cross equal multisets of link classes as they
  // stood before the last link split (the last regrouping made them so), so two of them still
  // match iff they cross equal multisets of the links that changed class then: each dirty flow's
  // signature is the sorted new classes of the moved links it crosses (msig_, from the incidence
  // lists of those links), and a clean flow's is empty.
  bool moved_sigs_ = false;
  std::vector<std::int32_t> msig_;
  std::vector<std::int64_t> msig_at_;  // per dirty flow (and one past): start in msig_
  // Scratch of regroup: the class's items, their signatures and groups.
  std::vector<std::int32_t> items_, group_, sig_;
  std::vector<std::size_t> begin_, group_size_;
  Grouper grouper_;
  // Scratch of sort_dirty_by_class.
  std::vector<std::int32_t> by_class_, class_count_, dirty_classes_;
  std::vector<std::size_t> class_start_;
};

LinkPartition::Refinement::Refinement(LinkPartition& part, std::span<const PlanFlow> flows,
                                      std::span<const std::int32_t> links,
                                      std::vector<std::int32_t>& colour, std::int32_t count_classes,
                                      std::size_t first, std::uint64_t since)
    : p_(part),
      flows_(flows),
      links_(links),
      colour_(colour),
      first_(first),
      fmem_(static_cast<std::size_t>(count_classes)),
      all_(since == ~std::uint64_t{0}),
      is_dirty_(flows.size(), 0),
      dirty_pos_(flows.size()) {
  for (std::size_t i = 0; i < flows.size(); ++i)
    fmem_[colour[i]].push_back(static_cast<std::int32_t>(i));
  for (const auto& m : fmem_)
    if (!m.empty() && static_cast<std::size_t>(m[0]) < first) ++first_classes_;
  if (!all_) seed(since);
}

void LinkPartition::Refinement::seed(std::uint64_t since) {
  // Seeded with a partition that was equitable for the link partition of version `since`: only
  // the links in classes split since then, and the flows crossing them, need a look.
  for (std::int32_t l : p_.inc_link_) {
    const std::int32_t b = p_.class_of_[l];
    if (p_.split_at_[b] <= since) continue;
    seeded_.push_back(b);
    mark_crossing(l);
  }
}

void LinkPartition::Refinement::mark_crossing(std::int32_t l) {
  const std::int32_t t = p_.touched_[l];
  if (t < 0) return;
  for (auto k = p_.inc_begin_[t]; k < p_.inc_begin_[t + 1]; ++k) {
    const std::int32_t i = p_.inc_flow_[k];
    if (!is_dirty_[i]) {
      is_dirty_[i] = 1;
      dirty_pos_[i] = static_cast<std::int32_t>(dirty_.size());
      dirty_.push_back(i);
    }
  }
}

bool LinkPartition::Refinement::run(std::size_t max_classes, bool& too_fine) {
  bool changed = false;
  for (;;) {
    moved_flows_.clear();
    if (all_)
      regroup_all();
    else
      regroup_dirty();
    for (std::int32_t i : dirty_) is_dirty_[i] = 0;
    dirty_.clear();
    if (first_classes_ > max_classes) {
      too_fine = true;
      return changed;
    }
    collect_link_classes();
    const bool full_round = std::exchange(all_, false);
    moved_links_.clear();
    // After the first round of a cold start, the links of a class are crossed by equal multisets
    // of flow colours as they stood before this round's regrouping (the previous split made them
    // so, or the seed was equitable), so the recoloured flows alone decide the split.
    if (!p_.split_links(colour_, lclasses_, flows_, links_, full_round ? nullptr : &moved_flows_,
                        moved_links_))
      return changed;
    changed = true;
    // Next round: the flows crossing a link that changed class, with their moved-link signatures.
    for (std::int32_t l : moved_links_) mark_crossing(l);
    moved_link_signatures();
  }
}

void LinkPartition::Refinement::regroup_all() {
  const auto classes = static_cast<std::int32_t>(fmem_.size());
  for (std::int32_t c = 0; c < classes; ++c) {
    if (fmem_[c].size() < 2) continue;
    items_ = fmem_[c];
    regroup(c, false);
  }
}

void LinkPartition::Refinement::regroup_dirty() {
  // A class keeps its id for the group of a clean member (all clean members still have equal
  // signatures), else for that of its largest group.
  sort_dirty_by_class();
  for (std::size_t k = 0; k < dirty_classes_.size(); ++k) {
    const std::int32_t c = dirty_classes_[k];
    const std::size_t a = class_start_[k], e = class_start_[k + 1];
    items_.clear();
    const bool pinned = e - a < fmem_[c].size();
    if (pinned) {
      for (std::int32_t i : fmem_[c])
        if (!is_dirty_[i]) {
          items_.push_back(i);
          break;
        }
    }
    items_.insert(items_.end(), by_class_.begin() + static_cast<std::ptrdiff_t>(a),
                  by_class_.begin() + static_cast<std::ptrdiff_t>(e));
    if (items_.size() >= 2) regroup(c, pinned);
  }
}

void LinkPartition::Refinement::sort_dirty_by_class() {
  // A counting sort: classes in order of first appearance among the dirty flows, flows in dirty
  // order; class k's flows are by_class_[class_start_[k], class_start_[k + 1]).
  class_count_.resize(fmem_.size(), 0);
  dirty_classes_.clear();
  for (std::int32_t i : dirty_)
    if (class_count_[colour_[i]]++ == 0) dirty_classes_.push_back(colour_[i]);
  class_start_.clear();
  std::size_t at = 0;
  for (std::int32_t c : dirty_classes_) {
    class_start_.push_back(at);
    at += static_cast<std::size_t>(std::exchange(class_count_[c], 0));
  }
  class_start_.push_back(at);
  by_class_.resize(dirty_.size());
  for (std::size_t k = 0; k < dirty_classes_.size(); ++k)
    class_count_[dirty_classes_[k]] = static_cast<std::int32_t>(k);  // its slot, for the fill
  std::vector<std::int64_t>& fill = p_.fill_;
  fill.assign(class_start_.begin(), class_start_.end() - 1);
  for (std::int32_t i : dirty_)
    by_class_[static_cast<std::size_t>(fill[class_count_[colour_[i]]]++)] = i;
  for (std::int32_t c : dirty_classes_) class_count_[c] = 0;
}

void LinkPartition::Refinement::flow_signatures() {
  // sig_[begin_[k], begin_[k + 1]): item k's signature, the sorted classes of its links (or of
  // its moved links, see moved_sigs_).
  sig_.clear();
  begin_.resize(items_.size() + 1);
  for (std::size_t k = 0; k < items_.size(); ++k) {
    begin_[k] = sig_.size();
    const std::int32_t i = items_[k];
    if (moved_sigs_) {
      if (is_dirty_[i])
        sig_.insert(sig_.end(), msig_.begin() + msig_at_[dirty_pos_[i]],
                    msig_.begin() + msig_at_[dirty_pos_[i] + 1]);
      continue;
    }
    const PlanFlow& f = flows_[i];
    for (std::int32_t j = 0; j < f.link_count; ++j)
      sig_.push_back(p_.class_of_[links_[f.link_begin + j]]);
    std::sort(sig_.begin() + static_cast<std::ptrdiff_t>(begin_[k]), sig_.end());
  }
  begin_[items_.size()] = sig_.size();
}

// Splits class c by signature; each group but one gets a new id. With `pinned` (items_[0] stands
// for the clean members, which are not listed) its group keeps id c, else the largest group does
// (the first of equal ones): the recoloured flows drive the next link split, so fewer is cheaper.
void LinkPartition::Refinement::regroup(std::int32_t c, bool pinned) {
  flow_signatures();
  auto seg = [&](std::size_t k) {
    return std::pair(sig_.begin() + static_cast<std::ptrdiff_t>(begin_[k]),
                     sig_.begin() + static_cast<std::ptrdiff_t>(begin_[k + 1]));
  };
  const std::int32_t groups = grouper_.run(
      items_.size(), group_,
      [&](std::size_t k) {
        auto [x, y] = seg(k);
        return hash_range(x, y);
      },
      [&](std::size_t x, std::size_t y) {
        auto [x0, x1] = seg(x);
        auto [y0, y1] = seg(y);
        return std::equal(x0, x1, y0, y1);
      });
  if (groups == 1) return;
  std::int32_t keep = 0;
  if (!pinned) {
    group_size_.assign(static_cast<std::size_t>(groups), 0);
    for (std::size_t k = 0; k < items_.size(); ++k) ++group_size_[group_[k]];
    keep = static_cast<std::int32_t>(std::max_element(group_size_.begin(), group_size_.end()) -
                                     group_size_.begin());
  }
  const auto first_new = static_cast<std::int32_t>(fmem_.size());
  fmem_.resize(fmem_.size() + static_cast<std::size_t>(groups - 1));
  if (static_cast<std::size_t>(items_[0]) < first_)
    first_classes_ += static_cast<std::size_t>(groups - 1);
  for (std::size_t k = 0; k < items_.size(); ++k) {
    const std::int32_t g = group_[k];
    if (g == keep) continue;
    const std::int32_t id = first_new + (g < keep ? g : g - 1);
    colour_[items_[k]] = id;
    fmem_[id].push_back(items_[k]);
    moved_flows_.push_back(items_[k]);
  }
  std::erase_if(fmem_[c], [&](std::int32_t i) { return colour_[i] != c; });
}

void LinkPartition::Refinement::collect_link_classes() {
  // The link classes to split, each once (marked, then sorted: few of them): in a full round all
  // those the phase crosses, else those the recoloured flows cross, and the seed's.
  lclasses_.clear();
  lclass_seen_.resize(p_.members_.size(), 0);
  auto add_lclass = [&](std::int32_t b) {
    if (!lclass_seen_[b]) {
      lclass_seen_[b] = 1;
      lclasses_.push_back(b);
    }
  };
  if (all_) {
    for (std::int32_t l : p_.inc_link_) add_lclass(p_.class_of_[l]);
  } else {
    for (std::int32_t i : moved_flows_) {
      const PlanFlow& f = flows_[i];
      for (std::int32_t j = 0; j < f.link_count; ++j)
        add_lclass(p_.class_of_[links_[f.link_begin + j]]);
    }
  }
  for (std::int32_t b : seeded_) add_lclass(b);
  seeded_.clear();
  for (std::int32_t b : lclasses_) lclass_seen_[b] = 0;
  std::sort(lclasses_.begin(), lclasses_.end());
}

void LinkPartition::Refinement::moved_link_signatures() {
  // msig_ per dirty flow: the new classes of the moved links it crosses, sorted (a counting sort
  // by dirty flow over the moved links' incidence lists).
  moved_sigs_ = true;
  msig_at_.assign(dirty_.size() + 1, 0);
  for (std::int32_t l : moved_links_) {
    const std::int32_t t = p_.touched_[l];
    if (t < 0) continue;
    for (auto k = p_.inc_begin_[t]; k < p_.inc_begin_[t + 1]; ++k)
      ++msig_at_[dirty_pos_[p_.inc_flow_[k]] + 1];
  }
  for (std::size_t d = 1; d < msig_at_.size(); ++d) msig_at_[d] += msig_at_[d - 1];
  msig_.resize(static_cast<std::size_t>(msig_at_.back()));
  std::vector<std::int64_t>& fill = p_.fill_;
  fill.assign(msig_at_.begin(), msig_at_.end() - 1);
  for (std::int32_t l : moved_links_) {
    const std::int32_t t = p_.touched_[l];
    if (t < 0) continue;
    for (auto k = p_.inc_begin_[t]; k < p_.inc_begin_[t + 1]; ++k)
      msig_[fill[dirty_pos_[p_.inc_flow_[k]]]++] = p_.class_of_[l];
  }
  for (std::size_t d = 0; d + 1 < msig_at_.size(); ++d)
    std::sort(msig_.begin() + msig_at_[d], msig_.begin() + msig_at_[d + 1]);
}

bool LinkPartition::run(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
                        std::vector<std::int32_t>& colour, std::int32_t count_classes,
                        std::size_t first, std::size_t max_classes, bool& too_fine,
                        std::uint64_t since) {
  build_incidence(flows, links);
  Refinement refinement(*this, flows, links, colour, count_classes, first, since);
  const bool changed = refinement.run(max_classes, too_fine);
  for (std::int32_t l : inc_link_) touched_[l] = -1;
  return changed;
}

void LinkPartition::store(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
                          std::span<const std::int32_t> colour, QuotientPhase& q) const {
  // Classes renumbered in order of first appearance within the phase.
  const std::size_t n = flows.size();
  std::int32_t lo = 0, hi = -1;
  if (n > 0) {
    lo = *std::min_element(colour.begin(), colour.end());
    hi = *std::max_element(colour.begin(), colour.end());
  }
  std::vector<std::int32_t> id(static_cast<std::size_t>(hi - lo + 1), -1);
  q.version = version_;
  q.too_fine = false;
  q.class_of.resize(n);
  std::int32_t classes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::int32_t& c = id[static_cast<std::size_t>(colour[i] - lo)];
    if (c < 0) c = classes++;
    q.class_of[i] = c;
  }
  q.flows.assign(static_cast<std::size_t>(classes), PlanFlow{});
  q.rep.assign(static_cast<std::size_t>(classes), -1);
  q.links.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t c = q.class_of[i];
    PlanFlow& f = q.flows[c];
    if (q.rep[c] < 0) {
      q.rep[c] = static_cast<std::int32_t>(i);
      f = flows[i];
      f.weight = 0;
    }
    f.weight += flows[i].weight;
  }
  for (std::size_t c = 0; c < q.flows.size(); ++c) {
    const PlanFlow& r = flows[q.rep[c]];
    q.flows[c].link_begin = static_cast<std::int64_t>(q.links.size());
    for (std::int32_t k = 0; k < r.link_count; ++k)
      q.links.push_back(class_of_[links[r.link_begin + k]]);
  }
  q.link_classes.assign(q.links.begin(), q.links.end());
  std::sort(q.link_classes.begin(), q.link_classes.end());
  q.link_classes.erase(std::unique(q.link_classes.begin(), q.link_classes.end()),
                       q.link_classes.end());
}

}  // namespace zerosim
