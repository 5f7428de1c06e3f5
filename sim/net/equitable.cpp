// Colour refinement of one phase's flow/link incidence against the global link partition.
//
// Each round groups the flows by (colour, sorted classes of their links), then the links of each
// class by the sorted colours of the flows crossing them (the incidence by link is built once per
// refine call). Groups are found by hashing a signature and comparing it exactly with the first
// member of the group it hashes to, and numbered in order of first appearance, so a round costs
// time linear in the incidences plus sorting each signature, and class ids depend only on the
// inputs.
#include "sim/net/equitable.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace zerosim {

LinkPartition::LinkPartition(std::span<const double> capacities)
    : class_of_(capacities.size()), touched_(capacities.size(), -1) {
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

bool LinkPartition::split_links(const std::vector<std::int32_t>& colour) {
  // A link's signature: the sorted colours of the flows crossing it (empty if untouched).
  inc_col_.resize(inc_flow_.size());
  std::vector<std::int32_t> classes;
  for (std::size_t t = 0; t < inc_link_.size(); ++t) {
    const auto b = inc_begin_[t], e = inc_begin_[t + 1];
    for (auto k = b; k < e; ++k) inc_col_[k] = colour[inc_flow_[k]];
    std::sort(inc_col_.begin() + b, inc_col_.begin() + e);
    classes.push_back(class_of_[inc_link_[t]]);
  }
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  auto seg = [&](std::int32_t l) {
    const std::int32_t t = touched_[l];
    if (t < 0) return std::pair(inc_col_.begin(), inc_col_.begin());
    return std::pair(inc_col_.begin() + inc_begin_[t], inc_col_.begin() + inc_begin_[t + 1]);
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
    // The group of the first (smallest) link keeps id b; the others are new, in order.
    const auto first_new = static_cast<std::int32_t>(members_.size());
    split_at_[b] = version_ + 1;
    for (std::int32_t g = 1; g < groups; ++g) {
      members_.emplace_back();
      capacity_.push_back(capacity_[b]);
      split_at_.push_back(version_ + 1);
    }
    members_[b].clear();
    for (std::size_t k = 0; k < m.size(); ++k) {
      const std::int32_t id = group[k] == 0 ? b : first_new + group[k] - 1;
      class_of_[m[k]] = id;
      members_[id].push_back(m[k]);
    }
  }
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
  const std::size_t n = flows.size();
  // Incidence by link, in flow order (a flow crossing a link twice is listed twice).
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
  auto untouch = [&] {
    for (std::int32_t l : inc_link_) touched_[l] = -1;
  };

  // Initial colours: (bytes, weight, crosses_nodes).
  std::vector<std::int32_t> colour(n), next;
  std::map<std::tuple<double, double, bool>, std::int32_t> initial;
  for (std::size_t i = 0; i < n; ++i)
    colour[i] = initial
                    .try_emplace({flows[i].bytes, flows[i].weight, flows[i].crosses_nodes},
                                 static_cast<std::int32_t>(initial.size()))
                    .first->second;
  auto count_classes = static_cast<std::int32_t>(initial.size());

  // Flat signatures: colour, then the sorted classes of the flow's links.
  std::vector<std::int32_t> sig;
  std::vector<std::size_t> begin(n + 1);
  Grouper grouper;
  bool changed = false;
  for (;;) {
    sig.clear();
    for (std::size_t i = 0; i < n; ++i) {
      begin[i] = sig.size();
      sig.push_back(colour[i]);
      for (std::int32_t k = 0; k < flows[i].link_count; ++k)
        sig.push_back(class_of_[links[flows[i].link_begin + k]]);
      std::sort(sig.begin() + static_cast<std::ptrdiff_t>(begin[i]) + 1, sig.end());
    }
    begin[n] = sig.size();
    auto seg = [&](std::size_t i) {
      return std::pair(sig.begin() + static_cast<std::ptrdiff_t>(begin[i]),
                       sig.begin() + static_cast<std::ptrdiff_t>(begin[i + 1]));
    };
    const std::int32_t fresh = grouper.run(
        n, next,
        [&](std::size_t i) {
          auto [a, b] = seg(i);
          return hash_range(a, b);
        },
        [&](std::size_t a, std::size_t b) {
          auto [a0, a1] = seg(a);
          auto [b0, b1] = seg(b);
          return std::equal(a0, a1, b0, b1);
        });
    colour.swap(next);
    if (static_cast<std::size_t>(fresh) > max_classes) {
      untouch();
      q = QuotientPhase{};
      q.too_fine = true;
      return changed;
    }
    const bool split = split_links(colour);
    changed = changed || split;
    if (fresh == count_classes && !split) break;
    count_classes = fresh;
  }
  untouch();

  q.version = version_;
  q.class_of = colour;
  q.flows.assign(static_cast<std::size_t>(count_classes), PlanFlow{});
  q.rep.assign(static_cast<std::size_t>(count_classes), -1);
  q.links.clear();
  for (std::size_t i = 0; i < n; ++i) {
    PlanFlow& c = q.flows[colour[i]];
    if (q.rep[colour[i]] < 0) {
      q.rep[colour[i]] = static_cast<std::int32_t>(i);
      c = flows[i];
      c.weight = 0;
    }
    c.weight += flows[i].weight;
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
  return changed;
}

}  // namespace zerosim
