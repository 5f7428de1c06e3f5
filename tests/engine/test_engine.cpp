// Engine: ordering by (time, insertion sequence), model polling, determinism.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
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

TEST_CASE("a cancelled event does not run but counts, and the run ends no earlier than it") {
  // The same schedule twice: once leaving an event to fire as a no-op, once cancelling it. Both
  // runs see the same callbacks at the same times, the same event count and the same end time.
  for (const bool cancel : {false, true}) {
    Engine e;
    std::vector<double> ran;
    bool live = true;
    const Engine::EventId late = e.schedule_at(5.0, [&] {
      if (live) ran.push_back(-1);
    });
    e.schedule_at(1.0, [&] {
      ran.push_back(e.now());
      live = false;
      if (cancel) CHECK(e.cancel(late));
      e.schedule_after(1.0, [&] { ran.push_back(e.now()); });
    });
    e.schedule_at(3.0, [&] { ran.push_back(e.now()); });
    CHECK(e.run() == 5.0);  // the stale event's time, run or cancelled
    CHECK(ran == std::vector<double>{1.0, 2.0, 3.0});
    CHECK(e.events_processed() == 4);
    CHECK_FALSE(e.cancel(late));  // ran or cancelled already
  }
}

TEST_CASE("cancelling keeps the heap's order: the rest run in (time, insertion) order") {
  // 64 events at times cycling through 0..7 (ties in insertion order), every third cancelled:
  // the survivors run sorted by (time, insertion index).
  Engine e;
  std::vector<int> order;
  std::vector<Engine::EventId> ids;
  for (int i = 0; i < 64; ++i)
    ids.push_back(e.schedule_at((i * 5) % 8, [&order, i] { order.push_back(i); }));
  std::vector<std::pair<int, int>> expected;
  for (int i = 0; i < 64; ++i)
    if (i % 3 == 0)
      CHECK(e.cancel(ids[static_cast<std::size_t>(i)]));
    else
      expected.push_back({(i * 5) % 8, i});
  std::sort(expected.begin(), expected.end());
  e.run();
  std::vector<int> want;
  for (const auto& [t, i] : expected) want.push_back(i);
  CHECK(order == want);
  CHECK(e.events_processed() == 64);
}

TEST_CASE("reschedule is cancel then schedule_at of the same callback: same order, clock, count") {
  // 48 events at times cycling through 0..7; from a callback at t = 0.5 every fourth is moved to
  // a new time (earlier and later ones, ties with queued events included), once by cancel +
  // schedule_at of an equal callback and once by reschedule. Both runs give the same order, end
  // time and event count; an event that ran already is not rescheduled.
  std::vector<int> orders[2];
  double ends[2];
  std::uint64_t counts[2];
  for (const bool in_place : {false, true}) {
    Engine e;
    std::vector<int>& order = orders[in_place];
    std::vector<Engine::EventId> ids;
    for (int i = 0; i < 48; ++i)
      ids.push_back(e.schedule_at(1 + (i * 5) % 8, [&order, i] { order.push_back(i); }));
    Engine::EventId first = e.schedule_at(0.25, [&order] { order.push_back(-1); });
    e.schedule_at(0.5, [&] {
      CHECK_FALSE(e.reschedule(first, 3.0));  // ran already
      for (int i = 0; i < 48; i += 4) {
        const double t = 1 + (i * 7) % 9;  // ties with queued events
        auto& id = ids[static_cast<std::size_t>(i)];
        if (in_place) {
          CHECK(e.reschedule(id, t));
        } else {
          CHECK(e.cancel(id));
          id = e.schedule_at(t, [&order, i] { order.push_back(i); });
        }
      }
    });
    ends[in_place] = e.run();
    counts[in_place] = e.events_processed();
  }
  CHECK(orders[0] == orders[1]);
  CHECK(orders[1].size() == 49);
  CHECK(ends[0] == ends[1]);
  CHECK(counts[0] == counts[1]);
  CHECK(counts[1] == 50 + 12);  // 50 events, 12 of them moved: each move counts one cancelled
}

TEST_CASE("start_at sets the clock of an engine that has not run, and only of such an engine") {
  Engine e;
  e.start_at(2.5);
  CHECK(e.now() == 2.5);
  double at = 0;
  e.schedule_after(1.0, [&] { at = e.now(); });
  CHECK_THROWS_AS(e.start_at(3.0), std::logic_error);  // something is scheduled
  e.run();
  CHECK(at == 3.5);
  Engine fresh;
  fresh.start_at(1.0);
  CHECK_THROWS_AS(fresh.start_at(0.5), std::logic_error);  // before now
}

namespace {
// A recorder whose method an Action calls: the events it sees, by index.
struct Recorder {
  std::vector<int>* order;
  void seen(std::size_t i) { order->push_back(static_cast<int>(i)); }
};
}  // namespace

TEST_CASE("Actions and std::function callbacks share one order; cancel and reschedule take both") {
  // 40 events at times cycling through 0..7, even indices as Actions and odd ones as functions.
  // At t = 0.5 a callback cancels every fifth pending one, moves every seventh to t = 7.5, then
  // schedules an Action and a function (into freed slots) at t = 2. The run is the survivors in
  // (time, insertion) order, whichever kind each is; a move inserts anew.
  Engine e;
  std::vector<int> order;
  Recorder rec{&order};
  std::vector<Engine::EventId> ids;
  std::vector<double> at;
  std::vector<int> rank;  // insertion order
  std::vector<bool> gone;
  int inserted = 0;
  const auto add = [&](double t, int i) {
    ids.push_back(i % 2 == 0 ? e.schedule_at(t, Engine::bind<&Recorder::seen>(
                                                    &rec, static_cast<std::size_t>(i)))
                             : e.schedule_at(t, [&order, i] { order.push_back(i); }));
    at.push_back(t);
    rank.push_back(inserted++);
    gone.push_back(false);
  };
  for (int i = 0; i < 40; ++i) add((i * 5) % 8, i);
  e.schedule_at(0.5, [&] {
    for (std::size_t k = 0; k < 40; ++k) {
      if (at[k] <= 0.5) continue;  // ran already
      if (k % 5 == 0) {
        CHECK(e.cancel(ids[k]));
        gone[k] = true;
      } else if (k % 7 == 0) {
        CHECK(e.reschedule(ids[k], 7.5));
        at[k] = 7.5;
        rank[k] = inserted++;
      }
    }
    add(2.0, 40);
    add(2.0, 41);
  });
  e.run();
  std::vector<std::pair<std::pair<double, int>, int>> survivors;
  for (std::size_t k = 0; k < at.size(); ++k)
    if (!gone[k]) survivors.push_back({{at[k], rank[k]}, static_cast<int>(k)});
  std::sort(survivors.begin(), survivors.end());
  std::vector<int> want;
  for (const auto& s : survivors) want.push_back(s.second);
  CHECK(order == want);
  CHECK(order.size() == 42 - 7);  // every fifth of the 40 but index 0 (t = 0, ran) cancelled
}
