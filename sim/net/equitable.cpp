// Colour refinement of one phase's flow/link incidence against the global link partition.
#include "sim/net/equitable.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace zerosim {

LinkPartition::LinkPartition(std::span<const double> capacities)
    : class_of_(capacities.size()), touched_pos_(capacities.size(), -1) {
  std::map<double, std::int32_t> by_cap;
  for (std::size_t l = 0; l < capacities.size(); ++l) {
    auto [it, fresh] =
        by_cap.try_emplace(capacities[l], static_cast<std::int32_t>(members_.size()));
    if (fresh) {
      members_.emplace_back();
      capacity_.push_back(capacities[l]);
    }
    class_of_[l] = it->second;
    members_[it->second].push_back(static_cast<std::int32_t>(l));
  }
}

namespace {

// Dense ids for keys in sorted order; order[] is sorted by less(); equal(a, b) on neighbours.
template <class Less, class Equal>
std::int32_t dense_ids(std::vector<std::int32_t>& order, std::vector<std::int32_t>& id, Less less,
                       Equal equal) {
  std::sort(order.begin(), order.end(), less);
  std::int32_t next = -1;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || !equal(order[k - 1], order[k])) ++next;
    id[order[k]] = next;
  }
  return next + 1;
}

}  // namespace

bool LinkPartition::split_links(std::span<const PlanFlow> flows,
                                std::span<const std::int32_t> links,
                                const std::vector<std::int32_t>& colour) {
  inc_.clear();
  for (std::size_t i = 0; i < flows.size(); ++i)
    for (std::int32_t k = 0; k < flows[i].link_count; ++k)
      inc_.emplace_back(links[flows[i].link_begin + k], colour[i]);
  std::sort(inc_.begin(), inc_.end());
  std::vector<std::int32_t> classes;
  for (std::size_t k = 0; k < inc_.size(); ++k)
    if (k == 0 || inc_[k].first != inc_[k - 1].first) {
      touched_pos_[inc_[k].first] = static_cast<std::int32_t>(k);
      classes.push_back(class_of_[inc_[k].first]);
    }
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());

  // A link's signature: the sorted colours of the flows crossing it (empty if untouched).
  auto sig = [&](std::int32_t l) {
    std::pair<std::size_t, std::size_t> r{0, 0};
    if (touched_pos_[l] < 0) return r;
    r.first = static_cast<std::size_t>(touched_pos_[l]);
    r.second = r.first;
    while (r.second < inc_.size() && inc_[r.second].first == l) ++r.second;
    return r;
  };
  auto sig_less = [&](std::int32_t a, std::int32_t b) {
    const auto ra = sig(a), rb = sig(b);
    const bool lt = std::lexicographical_compare(
        inc_.begin() + ra.first, inc_.begin() + ra.second, inc_.begin() + rb.first,
        inc_.begin() + rb.second, [](const auto& x, const auto& y) { return x.second < y.second; });
    if (lt) return true;
    const bool gt = std::lexicographical_compare(
        inc_.begin() + rb.first, inc_.begin() + rb.second, inc_.begin() + ra.first,
        inc_.begin() + ra.second, [](const auto& x, const auto& y) { return x.second < y.second; });
    return gt ? false : a < b;
  };
  auto sig_equal = [&](std::int32_t a, std::int32_t b) {
    const auto ra = sig(a), rb = sig(b);
    return std::equal(inc_.begin() + ra.first, inc_.begin() + ra.second, inc_.begin() + rb.first,
                      inc_.begin() + rb.second,
                      [](const auto& x, const auto& y) { return x.second == y.second; });
  };

  bool split = false;
  for (std::int32_t b : classes) {
    std::vector<std::int32_t> m = members_[b];
    std::sort(m.begin(), m.end(), sig_less);
    std::vector<std::vector<std::int32_t>> groups(1);
    for (std::size_t k = 0; k < m.size(); ++k) {
      if (k > 0 && !sig_equal(m[k - 1], m[k])) groups.emplace_back();
      groups.back().push_back(m[k]);
    }
    if (groups.size() == 1) continue;
    split = true;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::sort(groups[g].begin(), groups[g].end());
      std::int32_t id = b;
      if (g > 0) {
        id = static_cast<std::int32_t>(members_.size());
        members_.emplace_back();
        capacity_.push_back(capacity_[b]);
      }
      for (std::int32_t l : groups[g]) class_of_[l] = id;
      members_[id] = std::move(groups[g]);
    }
  }
  for (const auto& [l, c] : inc_) touched_pos_[l] = -1;
  if (split) ++version_;
  return split;
}

bool LinkPartition::refine(std::span<const PlanFlow> flows, std::span<const std::int32_t> links,
                           QuotientPhase& q, std::size_t max_classes) {
  const std::size_t n = flows.size();
  std::vector<std::int32_t> order(n), colour(n), next(n);
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::int32_t i) {
    return std::tuple(flows[i].bytes, flows[i].weight, flows[i].crosses_nodes);
  };
  std::int32_t count = dense_ids(
      order, colour,
      [&](std::int32_t a, std::int32_t b) { return key(a) != key(b) ? key(a) < key(b) : a < b; },
      [&](std::int32_t a, std::int32_t b) { return key(a) == key(b); });

  // Flat signatures: colour, then the sorted classes of the flow's links.
  std::vector<std::int32_t> sig;
  std::vector<std::size_t> begin(n + 1);
  auto seg = [&](std::int32_t i) {
    return std::pair(sig.begin() + static_cast<std::ptrdiff_t>(begin[i]),
                     sig.begin() + static_cast<std::ptrdiff_t>(begin[i + 1]));
  };
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
    const std::int32_t fresh = dense_ids(
        order, next,
        [&](std::int32_t a, std::int32_t b) {
          auto [a0, a1] = seg(a);
          auto [b0, b1] = seg(b);
          if (std::lexicographical_compare(a0, a1, b0, b1)) return true;
          if (std::lexicographical_compare(b0, b1, a0, a1)) return false;
          return a < b;
        },
        [&](std::int32_t a, std::int32_t b) {
          auto [a0, a1] = seg(a);
          auto [b0, b1] = seg(b);
          return std::equal(a0, a1, b0, b1);
        });
    colour.swap(next);
    if (static_cast<std::size_t>(fresh) > max_classes) {
      q = QuotientPhase{};
      q.too_fine = true;
      return changed;
    }
    const bool split = split_links(flows, links, colour);
    changed = changed || split;
    if (fresh == count && !split) break;
    count = fresh;
  }

  q.version = version_;
  q.class_of = colour;
  q.flows.assign(static_cast<std::size_t>(count), PlanFlow{});
  q.rep.assign(static_cast<std::size_t>(count), -1);
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
  return changed;
}

}  // namespace zerosim
