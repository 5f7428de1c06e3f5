// Watchdog: a thread that aborts hung NCCL communicators. The harness arms it before each
// measurement with a deadline and the communicators in use; if the deadline passes, the watchdog
// calls ncclCommAbort on each (which makes blocked NCCL work return), prints what hung, and, if the
// process has not exited 10 s later, terminates it with exit code 4. Records already written are
// fsynced, so nothing measured is lost.
#pragma once
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zerosim::harness {

class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  void arm(double timeout_s, std::vector<ncclComm_t> comms, std::string what);
  void disarm();
  bool fired() const { return fired_.load(); }

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, stop_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::vector<ncclComm_t> comms_;
  std::string what_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace zerosim::harness
