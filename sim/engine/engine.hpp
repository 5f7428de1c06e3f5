// Engine: one clock and one event queue ordered by (time, insertion sequence), so the same inputs
// give the same outputs bit for bit. Models plug in the SimGrid way: each answers "when is your
// next completion?" and "advance to t"; the engine never knows a model's internals. Module engine
// depends on nothing: the network models (sim/net) and the step program's interpreter
// (sim/program) build on it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "sim/engine/action.hpp"

namespace zerosim {

constexpr double kNever = std::numeric_limits<double>::infinity();

// A resource model driven by the engine (e.g. the flow-level network).
class Model {
 public:
  virtual ~Model() = default;
  // Earliest time at which the model has something to do (kNever if idle).
  virtual double next_event_time() const = 0;
  // Advance the model's state to time t (<= next_event_time()) and fire what completes at t.
  virtual void advance_to(double t) = 0;
};

class Engine {
 public:
  using Callback = std::function<void()>;
  using Action = zerosim::Action;  // action.hpp: what the hot paths schedule
  template <auto Method, class T>
  static Action bind(T* self, std::size_t arg) {
    return bind_action<Method>(self, arg);
  }
  // A scheduled event, for cancel (valid until the event runs or is cancelled).
  struct EventId {
    std::uint32_t slot = 0;
    std::uint64_t seq = ~std::uint64_t{0};  // none
  };

  double now() const { return now_; }
  // Sets the clock of an engine that has not scheduled anything yet (a run resumed from a
  // snapshot starts where the snapshot's run was). Throws logic_error otherwise or for t < now().
  void start_at(double t);
  // Schedules cb at time t >= now(). Events at equal times run in insertion order.
  EventId schedule_at(double t, Callback cb) {
    return schedule_at(t, callbacks_.keep(std::move(cb)));
  }
  EventId schedule_at(double t, Action a);
  EventId schedule_after(double dt, Callback cb) { return schedule_at(now_ + dt, std::move(cb)); }
  EventId schedule_after(double dt, Action a) { return schedule_at(now_ + dt, a); }
  // Takes a pending event out of the queue (false: it ran or was cancelled already). It counts as
  // an event that ran and did nothing: events_processed includes it, and run() ends no earlier
  // than its time. So a model that replaces its scheduled events (SM sharing reschedules every
  // running kernel at each collective's start and end) keeps the queue short and sees the same
  // clock and event count as one that leaves the old events to fire stale.
  bool cancel(EventId id);
  // cancel(id) then schedule_at(t, the same callback), in place: the event keeps its slot and
  // callback, takes the next sequence number and moves to t; the cancel is counted as cancel
  // counts it. So the queue's order, the clock and the event count are those of cancel and
  // schedule_at, without freeing and rebuilding the callback. Returns false (id unchanged) when
  // id is not pending: then nothing is counted and the caller schedules afresh.
  bool reschedule(EventId& id, double t);
  void add_model(Model* m) { models_.push_back(m); }
  // Runs until no event is pending and every model is idle. Returns the final time.
  double run();
  std::uint64_t events_processed() const { return events_; }
  // Events scheduled but not yet run.
  std::size_t pending() const { return heap_.size(); }

 private:
  // The heap holds small trivially-copyable entries; callbacks live in a slot pool that is reused,
  // so the steady state neither allocates nor moves std::function objects while the heap is
  // reshuffled. A slot holds an Action; a std::function is kept in callbacks_.
  struct Event {
    double time;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  // A binary min-heap by (time, seq), keys unique, so the order events run in does not depend
  // on the heap's layout; pos_[slot]: the slot's event's index in heap_ (kNone: not queued).
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  void place(std::size_t i, const Event& ev) {
    heap_[i] = ev;
    pos_[ev.slot] = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i, Event ev);
  void sift_down(std::size_t i, Event ev);
  void remove_at(std::size_t i);
  std::vector<Event> heap_;
  std::vector<std::uint32_t> pos_;
  std::vector<Action> slots_;
  CallbackPool callbacks_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Model*> models_;
  double now_ = 0;
  double cancelled_until_ = 0;  // the latest cancelled event's time: run() ends no earlier
  std::uint64_t seq_ = 0, events_ = 0;
};

}  // namespace zerosim
