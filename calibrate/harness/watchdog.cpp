#include "calibrate/harness/watchdog.hpp"

#include <cstdio>
#include <cstdlib>

namespace zerosim::harness {

Watchdog::Watchdog() : thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(double timeout_s, std::vector<ncclComm_t> comms, std::string what) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    armed_ = true;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(timeout_s));
    comms_ = std::move(comms);
    what_ = std::move(what);
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lk(mu_);
  armed_ = false;
  comms_.clear();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lk);
      continue;
    }
    if (cv_.wait_until(lk, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      fired_ = true;
      std::fprintf(stderr,
                   "zerosim-calibrate: error: %s did not finish within the watchdog timeout; "
                   "aborting %zu NCCL "
                   "communicator(s) (records written so far are kept)\n",
                   what_.c_str(), comms_.size());
      for (ncclComm_t c : comms_) ncclCommAbort(c);
      armed_ = false;
      // If the main thread stays blocked, end the process: exit code 4 = NCCL failure or hang.
      if (cv_.wait_for(lk, std::chrono::seconds(10), [this] { return stop_; })) return;
      std::fprintf(stderr,
                   "zerosim-calibrate: error: still blocked 10 s after ncclCommAbort; exiting\n");
      std::_Exit(4);
    }
  }
}

}  // namespace zerosim::harness
