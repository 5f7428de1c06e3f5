// Action: a callback held without std::function, a plain function of an object and an index
// (what the simulator's hot events are: a stream's op end, a collective's next phase). Trivially
// copyable, so a queue neither manages nor destroys it. CallbackPool turns any other callable into
// an Action that runs it once: the one place where such callables are kept.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace zerosim {

struct Action {
  void (*fn)(void*, std::size_t) = nullptr;
  void* self = nullptr;
  std::size_t arg = 0;
  void operator()() const { fn(self, arg); }
};

// The Action that calls self->*Method(arg).
template <auto Method, class T>
Action bind_action(T* self, std::size_t arg) {
  return Action{[](void* p, std::size_t a) { (static_cast<T*>(p)->*Method)(a); }, self, arg};
}

class CallbackPool {
 public:
  // An Action that runs f once; its entry is reused after.
  Action keep(std::function<void()> f);
  // Releases what keep(f) gave `a` without running it (its captures go now); false when `a` is not
  // one of this pool's.
  bool drop(const Action& a);

 private:
  void run(std::size_t i);
  std::vector<std::function<void()>> kept_;
  std::vector<std::size_t> free_;
};

}  // namespace zerosim
