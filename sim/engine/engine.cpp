// Engine: binary heap of (time, seq, slot) entries, indexed by slot for cancel, plus a reusable
// callback pool; models are polled for their next completion before every step.
#include "sim/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace zerosim {

// Inlined into their callers: an Event passed by value through memory stalls the load that
// reads it back (three stores forwarded to wider loads).
[[gnu::always_inline]] inline void Engine::sift_up(std::size_t i, Event ev) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!Later{}(heap_[parent], ev)) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, ev);
}

[[gnu::always_inline]] inline void Engine::sift_down(std::size_t i, Event ev) {
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Later{}(heap_[child], heap_[child + 1])) ++child;
    if (!Later{}(ev, heap_[child])) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, ev);
}

// Removes heap_[i], its slot freed; the last entry fills the hole, moved up or down.
[[gnu::always_inline]] inline void Engine::remove_at(std::size_t i) {
  const std::uint32_t slot = heap_[i].slot;
  pos_[slot] = kNone;
  free_slots_.push_back(slot);
  const Event last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  if (i > 0 && Later{}(heap_[(i - 1) / 2], last))
    sift_up(i, last);
  else
    sift_down(i, last);
}

void Engine::start_at(double t) {
  if (seq_ != 0 || events_ != 0 || !(t >= now_))
    throw std::logic_error("Engine::start_at: the engine has run, or time " + std::to_string(t) +
                           " is before now " + std::to_string(now_));
  now_ = t;
}

Engine::EventId Engine::schedule_at(double t, Action a) {
  if (!(t >= now_)) {  // also rejects NaN
    throw std::logic_error("Engine::schedule_at: time " + std::to_string(t) + " is before now " +
                           std::to_string(now_));
  }
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = a;
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(a);
    pos_.push_back(kNone);
  }
  const Event ev{t, seq_++, slot};
  heap_.push_back(ev);  // its place: sift_up writes it where it belongs
  sift_up(heap_.size() - 1, ev);
  return EventId{slot, ev.seq};
}

bool Engine::cancel(EventId id) {
  if (id.slot >= pos_.size()) return false;
  const std::uint32_t i = pos_[id.slot];
  if (i == kNone || heap_[i].seq != id.seq) return false;
  cancelled_until_ = std::max(cancelled_until_, heap_[i].time);
  callbacks_.drop(slots_[id.slot]);  // a kept callable's captures go now, as a run's would
  remove_at(i);
  ++events_;  // as if it had run
  return true;
}

bool Engine::reschedule(EventId& id, double t) {
  if (id.slot >= pos_.size()) return false;
  const std::uint32_t i = pos_[id.slot];
  if (i == kNone || heap_[i].seq != id.seq) return false;
  if (!(t >= now_)) {  // also rejects NaN
    throw std::logic_error("Engine::reschedule: time " + std::to_string(t) + " is before now " +
                           std::to_string(now_));
  }
  cancelled_until_ = std::max(cancelled_until_, heap_[i].time);
  ++events_;  // the cancelled event, as if it had run
  const Event ev{t, seq_++, id.slot};
  id.seq = ev.seq;
  // The new key is later in sequence than every queued one: up if its time is earlier than its
  // parent's, else down.
  if (i > 0 && Later{}(heap_[(i - 1) / 2], ev))
    sift_up(i, ev);
  else
    sift_down(i, ev);
  return true;
}

double Engine::run() {
  for (;;) {
    // Models first at equal times: what completes at t is observed by the events scheduled at t.
    double tm = kNever;
    Model* next = nullptr;
    for (Model* m : models_) {
      double t = m->next_event_time();
      if (t < tm) {
        tm = t;
        next = m;
      }
    }
    const double te = heap_.empty() ? kNever : heap_.front().time;
    if (next == nullptr && heap_.empty()) break;
    if (next != nullptr && tm <= te) {
      now_ = std::max(now_, tm);  // a model never moves the clock backwards
      next->advance_to(now_);
      ++events_;
      continue;
    }
    const Event ev = heap_.front();
    const Action a = slots_[ev.slot];
    remove_at(0);
    now_ = ev.time;
    ++events_;
    a();
  }
  // Cancelled events ran, doing nothing, no later than the last of them.
  now_ = std::max(now_, cancelled_until_);
  return now_;
}

}  // namespace zerosim
