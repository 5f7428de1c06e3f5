// Engine: binary heap of (time, seq, slot) entries plus a reusable callback pool; models are polled
// for their next completion before every step.
#include "sim/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace zerosim {

void Engine::schedule_at(double t, Callback cb) {
  if (!(t >= now_)) {  // also rejects NaN
    throw std::logic_error("Engine::schedule_at: time " + std::to_string(t) + " is before now " +
                           std::to_string(now_));
  }
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = std::move(cb);
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(std::move(cb));
  }
  heap_.push_back(Event{t, seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
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
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event ev = heap_.back();
    heap_.pop_back();
    now_ = ev.time;
    Callback cb = std::move(slots_[ev.slot]);
    free_slots_.push_back(ev.slot);
    ++events_;
    cb();
  }
  return now_;
}

}  // namespace zerosim
