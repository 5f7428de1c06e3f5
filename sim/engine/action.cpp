// CallbackPool: kept callables by index, their entries reused.
#include "sim/engine/action.hpp"

#include <utility>

namespace zerosim {

Action CallbackPool::keep(std::function<void()> f) {
  std::size_t i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
    kept_[i] = std::move(f);
  } else {
    i = kept_.size();
    kept_.push_back(std::move(f));
  }
  return bind_action<&CallbackPool::run>(this, i);
}

bool CallbackPool::drop(const Action& a) {
  if (a.self != this) return false;
  kept_[a.arg] = nullptr;
  free_.push_back(a.arg);
  return true;
}

void CallbackPool::run(std::size_t i) {
  std::function<void()> f = std::move(kept_[i]);  // moved out: f may keep more while it runs
  kept_[i] = nullptr;
  free_.push_back(i);
  f();
}

}  // namespace zerosim
