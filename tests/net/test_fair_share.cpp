// FairShare: each case states the system and the max-min fair shares expected, then asserts them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/net/fair_share.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using L = std::vector<std::int32_t>;

TEST_CASE("three flows on one link of capacity 9 get 3 each") {
  // System: link0 cap 9; flows A, B, C cross link0. Shares: 9/3 = 3 each.
  FairShare s;
  s.add_link(9);
  auto a = s.add_flow(L{0}), b = s.add_flow(L{0}), c = s.add_flow(L{0});
  s.solve();
  CHECK(s.rate(a) == zerosim::testing::Approx(3));
  CHECK(s.rate(b) == zerosim::testing::Approx(3));
  CHECK(s.rate(c) == zerosim::testing::Approx(3));
}

TEST_CASE("classic two-link line: the long flow is limited by the tighter link") {
  // System: link0 cap 1, link1 cap 2. Flow A crosses link0 and link1; B crosses link0; C crosses
  // link1. Link0 saturates first at level 1/2: A = B = 0.5. Then link1 has 2 - 0.5 = 1.5 left for C
  // alone.
  FairShare s;
  s.add_link(1);
  s.add_link(2);
  auto a = s.add_flow(L{0, 1}), b = s.add_flow(L{0}), c = s.add_flow(L{1});
  s.solve();
  CHECK(s.rate(a) == zerosim::testing::Approx(0.5));
  CHECK(s.rate(b) == zerosim::testing::Approx(0.5));
  CHECK(s.rate(c) == zerosim::testing::Approx(1.5));
}

TEST_CASE("bottleneck hierarchy: three levels saturate one after another") {
  // System: link0 cap 3 crossed by A, B, C; link1 cap 10 crossed by C, D; link2 cap 6 crossed by D,
  // E. Level 1: link0 saturates at 1 (A = B = C = 1). Link1 then has 9 left for D alone; link2
  // offers D and E 3 each, which is tighter: D = E = 3. Link1 ends with 10 - 1 - 3 = 6 unused.
  FairShare s;
  for (double c : {3.0, 10.0, 6.0}) s.add_link(c);
  auto a = s.add_flow(L{0}), b = s.add_flow(L{0}), c = s.add_flow(L{0, 1});
  auto d = s.add_flow(L{1, 2}), e = s.add_flow(L{2});
  s.solve();
  CHECK(s.rate(a) == zerosim::testing::Approx(1));
  CHECK(s.rate(b) == zerosim::testing::Approx(1));
  CHECK(s.rate(c) == zerosim::testing::Approx(1));
  CHECK(s.rate(d) == zerosim::testing::Approx(3));
  CHECK(s.rate(e) == zerosim::testing::Approx(3));
  CHECK(s.load(1) == zerosim::testing::Approx(4));
  CHECK(s.load(2) == zerosim::testing::Approx(6));
}

TEST_CASE("a weight-k flow equals k identical flows") {
  // System: link0 cap 10 crossed by X (weight 3) and Y (weight 1) = 4 unit flows at 2.5 each:
  // X = 7.5, Y = 2.5. Link1 cap 100 crossed by X only (not binding).
  FairShare s;
  s.add_link(10);
  s.add_link(100);
  auto x = s.add_flow(L{0, 1}, 3.0), y = s.add_flow(L{0});
  s.solve();
  CHECK(s.rate(x) == zerosim::testing::Approx(7.5));
  CHECK(s.rate(y) == zerosim::testing::Approx(2.5));
}

TEST_CASE("a flow with no links is unconstrained") {
  FairShare s;
  s.add_link(1);
  auto f = s.add_flow(L{});
  s.solve();
  CHECK(std::isinf(s.rate(f)));
}

TEST_CASE("incremental solve touches only the connected component") {
  // System: two disjoint islands. Island 1: link0 cap 4 with A, B (2 each). Island 2: link1 cap 6
  // with C (6). Adding D on link1 recomputes island 2 only: C = D = 3; A, B stay 2 and are not
  // returned as recomputed.
  FairShare s;
  s.add_link(4);
  s.add_link(6);
  auto a = s.add_flow(L{0}), b = s.add_flow(L{0}), c = s.add_flow(L{1});
  s.solve();
  CHECK(s.rate(c) == zerosim::testing::Approx(6));
  auto d = s.add_flow(L{1});
  const auto& changed = s.solve();
  CHECK(changed.size() == 2);
  CHECK(s.rate(c) == zerosim::testing::Approx(3));
  CHECK(s.rate(d) == zerosim::testing::Approx(3));
  CHECK(s.rate(a) == zerosim::testing::Approx(2));
  CHECK(s.rate(b) == zerosim::testing::Approx(2));
  // Removing C gives D the whole link again.
  s.remove_flow(c);
  s.solve();
  CHECK(s.rate(d) == zerosim::testing::Approx(6));
  // Doubling link0's capacity doubles A and B.
  s.set_capacity(0, 8);
  s.solve();
  CHECK(s.rate(a) == zerosim::testing::Approx(4));
}

namespace {
// Max-min fairness certificate: feasible, and every flow crosses a saturated link on which its rate
// per unit weight is the largest.
void check_maxmin(const FairShare& s) {
  const double eps = 1e-9;
  for (int l = 0; l < s.link_count(); ++l) CHECK(s.load(l) <= s.capacity(l) * (1 + eps));
  for (FairShare::FlowId f = 0; f < s.flow_capacity(); ++f) {
    if (!s.alive(f)) continue;
    bool has_bottleneck = false;
    for (std::int32_t l : s.links(f)) {
      if (s.load(l) < s.capacity(l) * (1 - eps)) continue;
      bool largest = true;
      for (FairShare::FlowId g = 0; g < s.flow_capacity(); ++g) {
        if (!s.alive(g)) continue;
        for (std::int32_t m : s.links(g))
          if (m == l && s.rate(g) / s.weight(g) > s.rate(f) / s.weight(f) * (1 + eps))
            largest = false;
      }
      has_bottleneck = has_bottleneck || largest;
    }
    CHECK(has_bottleneck);
  }
}
}  // namespace

TEST_CASE(
    "random systems: incremental equals full recompute and satisfies the max-min certificate") {
  std::mt19937 rng(7);
  FairShare s, full;
  const int links = 12;
  for (int l = 0; l < links; ++l) {
    const double c = 1.0 + static_cast<double>(rng() % 10);
    s.add_link(c);
    full.add_link(c);
  }
  std::vector<FairShare::FlowId> live;
  for (int step = 0; step < 300; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      L path;
      const int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        const std::int32_t l = static_cast<std::int32_t>(rng() % links);
        if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
      }
      const double w = 1.0 + static_cast<double>(rng() % 3);
      auto f = s.add_flow(path, w);
      auto g = full.add_flow(path, w);
      REQUIRE(f == g);
      live.push_back(f);
    } else {
      const std::size_t i = rng() % live.size();
      s.remove_flow(live[i]);
      full.remove_flow(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    s.solve();
    full.solve_all();
    for (auto f : live) REQUIRE(s.rate(f) == zerosim::testing::Approx(full.rate(f)).epsilon(1e-12));
    if (step % 25 == 0) check_maxmin(s);
  }
  check_maxmin(s);
}

TEST_CASE("a flow crossing a link twice uses twice its rate there; removal keeps the lists") {
  FairShare fs;
  const int l0 = fs.add_link(10), l1 = fs.add_link(100);
  const std::int32_t twice[] = {l0, l1, l0};
  const std::int32_t once[] = {l0};
  const auto a = fs.add_flow(twice, 1.0);
  const auto b = fs.add_flow(once, 1.0);
  const auto c = fs.add_flow(twice, 2.0);
  fs.solve();
  // Link 0 carries 2 x level (a) + level (b) + 2 x 2 x level (c) = 7 x level = 10.
  CHECK(fs.rate(a) == zerosim::testing::Approx(10.0 / 7));
  CHECK(fs.rate(b) == zerosim::testing::Approx(10.0 / 7));
  CHECK(fs.rate(c) == zerosim::testing::Approx(20.0 / 7));
  CHECK(fs.load(l0) == zerosim::testing::Approx(10.0));
  fs.remove_flow(a);
  fs.solve();
  CHECK(fs.rate(b) == zerosim::testing::Approx(2.0));  // 1 + 4 shares of 10
  CHECK(fs.rate(c) == zerosim::testing::Approx(4.0));
  fs.remove_flow(c);
  fs.solve();
  CHECK(fs.rate(b) == zerosim::testing::Approx(10.0));
  CHECK(fs.load(l1) == 0);
}
