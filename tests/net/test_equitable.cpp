// LinkPartition's colour refinement (equitable.hpp) against a plain reference: every round regroups
// every flow by (colour, sorted classes of its links) and every link by (class, sorted colours of
// the flows crossing it) until nothing splits. The stable colouring of that loop is the coarsest
// equitable partition refining the initial one, which is what refine_joint must reach however it
// skips work (only dirty flows regrouped, links split by recoloured flows only, moved-link
// signatures). Compared as partitions (which flows / links share a class), on structures that need
// many rounds (a ring with one defect), stay symmetric (a clean ring), or are irregular (random).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "sim/net/equitable.hpp"

using namespace zerosim;

namespace {

struct Phase {
  std::vector<std::vector<std::int32_t>> flows;  // link lists (a link may repeat)
  double bytes = 5;
};

struct Reference {
  std::vector<int> link_class;
  std::vector<std::vector<int>> flow_class;  // per phase, per flow
};

// Numbers values by first appearance.
template <class K>
int id_of(std::map<K, int>& ids, const K& k) {
  return ids.try_emplace(k, static_cast<int>(ids.size())).first->second;
}

Reference plain_refinement(const std::vector<double>& caps, const std::vector<Phase>& phases) {
  Reference r;
  std::map<double, int> by_cap;
  for (double c : caps) r.link_class.push_back(id_of(by_cap, c));
  std::map<std::pair<std::size_t, double>, int> initial;
  for (std::size_t p = 0; p < phases.size(); ++p)
    r.flow_class.emplace_back(phases[p].flows.size(),
                              id_of(initial, std::pair(p, phases[p].bytes)));
  auto count = [](const auto& v) {
    std::vector<int> all;
    for (const auto& x : v) all.insert(all.end(), x.begin(), x.end());
    std::sort(all.begin(), all.end());
    return std::unique(all.begin(), all.end()) - all.begin();
  };
  for (;;) {
    const auto before_f = count(r.flow_class);
    const auto before_l = count(std::vector<std::vector<int>>{r.link_class});
    std::map<std::pair<int, std::vector<int>>, int> fids;
    std::vector<std::vector<int>> crossing(caps.size());
    for (std::size_t p = 0; p < phases.size(); ++p)
      for (std::size_t i = 0; i < phases[p].flows.size(); ++i) {
        std::vector<int> sig;
        for (std::int32_t l : phases[p].flows[i]) sig.push_back(r.link_class[l]);
        std::sort(sig.begin(), sig.end());
        r.flow_class[p][i] = id_of(fids, std::pair(r.flow_class[p][i], sig));
      }
    for (std::size_t p = 0; p < phases.size(); ++p)
      for (std::size_t i = 0; i < phases[p].flows.size(); ++i)
        for (std::int32_t l : phases[p].flows[i]) crossing[l].push_back(r.flow_class[p][i]);
    std::map<std::pair<int, std::vector<int>>, int> lids;
    for (std::size_t l = 0; l < caps.size(); ++l) {
      std::sort(crossing[l].begin(), crossing[l].end());
      r.link_class[l] = id_of(lids, std::pair(r.link_class[l], crossing[l]));
    }
    if (count(r.flow_class) == before_f &&
        count(std::vector<std::vector<int>>{r.link_class}) == before_l)
      return r;
  }
}

template <class A, class B>
bool same_partition(std::size_t n, A&& x, B&& y) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if ((x(i) == x(j)) != (y(i) == y(j))) return false;
  return true;
}

// refine_joint on the phases, compared with the reference.
void check_against_reference(const std::vector<double>& caps, const std::vector<Phase>& phases) {
  std::vector<std::vector<PlanFlow>> flows(phases.size());
  std::vector<std::vector<std::int32_t>> pools(phases.size());
  for (std::size_t p = 0; p < phases.size(); ++p)
    for (const auto& ls : phases[p].flows) {
      flows[p].push_back(PlanFlow{static_cast<std::int64_t>(pools[p].size()),
                                  static_cast<std::int32_t>(ls.size()), false, phases[p].bytes, 1});
      pools[p].insert(pools[p].end(), ls.begin(), ls.end());
    }
  std::vector<QuotientPhase> q(phases.size());
  std::vector<JointPhase> joint;
  for (std::size_t p = 0; p < phases.size(); ++p) joint.push_back({flows[p], pools[p], &q[p]});
  LinkPartition part(caps);
  part.refine_joint(joint);
  const Reference ref = plain_refinement(caps, phases);
  CHECK(same_partition(
      caps.size(), [&](std::size_t l) { return part.class_of(static_cast<int>(l)); },
      [&](std::size_t l) { return ref.link_class[l]; }));
  for (std::size_t p = 0; p < phases.size(); ++p) {
    CAPTURE(p);
    REQUIRE(q[p].class_of.size() == phases[p].flows.size());
    CHECK(same_partition(
        phases[p].flows.size(), [&](std::size_t i) { return q[p].class_of[i]; },
        [&](std::size_t i) { return ref.flow_class[p][i]; }));
    for (std::size_t i = 0; i < phases[p].flows.size(); ++i)  // the quotient's weights add up
      CHECK(q[p].flows[static_cast<std::size_t>(q[p].class_of[i])].weight ==
            std::count(q[p].class_of.begin(), q[p].class_of.end(), q[p].class_of[i]));
    // Every phase is left equitable: revalidate accepts it as current.
    CHECK(part.revalidate(q[p]));
  }
}

// Flows over links {l, l + 1 mod n} around a ring.
Phase ring(int n, int stride = 1) {
  Phase p;
  for (int l = 0; l < n; ++l) p.flows.push_back({l, (l + stride) % n});
  return p;
}

}  // namespace

TEST_CASE("refine_joint equals plain colour refinement: a symmetric ring stays one class") {
  const std::vector<double> caps(30, 10.0);
  check_against_reference(caps, {ring(30)});
  const Phase r = ring(30);
  std::vector<PlanFlow> flows;
  std::vector<std::int32_t> pool;
  for (const auto& ls : r.flows) {
    flows.push_back(PlanFlow{static_cast<std::int64_t>(pool.size()), 2, false, r.bytes, 1});
    pool.insert(pool.end(), ls.begin(), ls.end());
  }
  LinkPartition part(caps);
  QuotientPhase q;
  CHECK_FALSE(part.refine(flows, pool, q));
  CHECK(part.class_count() == 1);
  REQUIRE(q.flows.size() == 1);
  CHECK(q.flows[0].weight == 30);
}

TEST_CASE(
    "refine_joint equals plain colour refinement: a ring with one defect splits by distance") {
  // The defect (a flow on link 0 alone) separates the links by their distance from link 0, one step
  // per round: about n / 2 rounds, each splitting off a pair of links.
  for (int n : {9, 30, 64}) {
    CAPTURE(n);
    const std::vector<double> caps(static_cast<std::size_t>(n), 10.0);
    Phase defect;
    defect.flows.push_back({0});
    defect.bytes = 7;
    check_against_reference(caps, {ring(n), defect});
    check_against_reference(caps, {defect, ring(n), ring(n, 3)});
  }
}

TEST_CASE("refine_joint equals plain colour refinement: irregular phases, repeated links") {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int n = 6 + static_cast<int>(rng() % 40);
    std::vector<double> caps;
    for (int l = 0; l < n; ++l) caps.push_back(rng() % 4 == 0 ? 20.0 : 10.0);
    std::vector<Phase> phases(1 + rng() % 3);
    for (Phase& p : phases) {
      p.bytes = 1 + static_cast<double>(rng() % 2);
      const int flows = 1 + static_cast<int>(rng() % 50);
      for (int f = 0; f < flows; ++f) {
        std::vector<std::int32_t> ls(1 + rng() % 4);
        for (auto& l : ls) l = static_cast<std::int32_t>(rng() % static_cast<unsigned>(n));
        p.flows.push_back(ls);
      }
    }
    check_against_reference(caps, phases);
  }
}
