// Engine: ordering by (time, insertion sequence), model polling, determinism.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "sim/engine/engine.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

TEST_CASE("events run in time order, ties in insertion order") {
  Engine e;
  std::vector<int> order;
  e.schedule_at(2.0, [&] { order.push_back(3); });
  e.schedule_at(1.0, [&] { order.push_back(1); });
  e.schedule_at(1.0, [&] { order.push_back(2); });
  e.schedule_at(0.5, [&] { order.push_back(0); });
  CHECK(e.run() == 2.0);
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(e.events_processed() == 4);
}

TEST_CASE("callbacks schedule more events; schedule_after is relative to now") {
  Engine e;
  std::vector<double> times;
  // A chain of 5 events 0.25 s apart, started at t = 1: last one at 1 + 4 * 0.25 = 2.
  int left = 5;
  std::function<void()> step = [&] {
    times.push_back(e.now());
    if (--left > 0) e.schedule_after(0.25, step);
  };
  e.schedule_at(1.0, step);
  CHECK(e.run() == zerosim::testing::Approx(2.0));
  REQUIRE(times.size() == 5);
  CHECK(times[4] == zerosim::testing::Approx(2.0));
}

TEST_CASE("an event at the current time runs after those already queued for it") {
  Engine e;
  std::vector<int> order;
  e.schedule_at(1.0, [&] {
    order.push_back(1);
    e.schedule_at(1.0, [&] { order.push_back(3); });
  });
  e.schedule_at(1.0, [&] { order.push_back(2); });
  e.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("scheduling in the past is a logic error") {
  Engine e;
  e.schedule_at(1.0, [&] { CHECK_THROWS_AS(e.schedule_at(0.5, [] {}), std::logic_error); });
  e.run();
}

namespace {
// Completes one job at each listed time.
struct ListModel : Model {
  std::vector<double> times;
  std::size_t next = 0;
  std::vector<double> fired;
  double next_event_time() const override { return next < times.size() ? times[next] : kNever; }
  void advance_to(double t) override {
    while (next < times.size() && times[next] <= t) fired.push_back(t), ++next;
  }
};
}  // namespace

TEST_CASE("models are polled and advanced before events at the same time") {
  Engine e;
  ListModel m;
  m.times = {0.5, 1.0, 3.0};
  e.add_model(&m);
  std::size_t fired_at_1 = 0;
  e.schedule_at(1.0, [&] { fired_at_1 = m.fired.size(); });
  CHECK(e.run() == 3.0);
  CHECK(m.fired == std::vector<double>{0.5, 1.0, 3.0});
  CHECK(fired_at_1 == 2);  // the model's completion at t = 1 was observed by the event at t = 1
}

TEST_CASE("same inputs give bit-identical outputs") {
  auto once = [] {
    Engine e;
    std::vector<double> out;
    std::uint64_t x = 12345;
    for (int i = 0; i < 1000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      double t = static_cast<double>(x >> 40) * 1e-6;
      e.schedule_at(t, [&out, &e, i] { out.push_back(e.now() + i); });
    }
    e.run();
    return out;
  };
  CHECK(once() == once());
}
