// run_program_direct: the step on a contention-free network in one pass (see step_program.hpp).
// Streams advance round-robin until every stream is done; a stream stops at a Wait whose Record has
// not run yet. Ops are checked as they are reached (no separate pass over the program):
// any op validate_program would reject makes it run before the bad reference is used, and a stuck
// program runs it before the deadlock is reported, so the errors are validate_program's. Each
// stream's timed ops are its lane of the result as they end.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/program/step_program.hpp"

namespace zerosim {

namespace {

// Out of line, so that the schedule loop keeps its clocks in registers.
[[noreturn, gnu::cold, gnu::noinline]] void reject(const StepProgram& p) {
  validate_program(p);  // throws for this op, or for an earlier one
  throw std::logic_error("run_program: malformed program");  // not reached
}

// One cost per collective class, asked for before the schedule (a call inside its loop kept the
// stream clock in memory). A class's members are trusted to be equal (validate_program checks
// that; lower_step's are, test_direct_run); a malformed class list throws validate_program's
// error (validate_program checks it first, with the same class).
std::vector<std::pair<double, NetStats>> class_costs(const StepProgram& p,
                                                     const CollectiveClasses& classes,
                                                     NetworkModel& network) {
  std::vector<std::pair<double, NetStats>> class_cost;
  class_cost.reserve(classes.first().size());
  for (const int f : classes.first())
    class_cost.push_back(f >= 0 ? network.cost(p.collectives[static_cast<std::size_t>(f)])
                                : std::pair<double, NetStats>{});
  return class_cost;
}

// A stream the schedule left unfinished: a malformed op it did not reach is reported first, else
// the deadlock.
void check_all_done(const StepProgram& p, const std::vector<std::size_t>& pc) {
  for (std::size_t s = 0; s < p.streams.size(); ++s)
    if (pc[s] < p.streams[s].ops.size()) {
      validate_program(p);
      throw std::logic_error(deadlock_message(p, s, pc[s]));
    }
}

// The lanes cut to their timed ops. A lane's ops end in order, so the step ends at the latest of
// the lanes' last ends.
RunResult result_of(std::vector<std::vector<OpTiming>>&& done,
                    const std::vector<std::size_t>& timed_in, double t0, const NetStats& net) {
  RunResult r;
  std::size_t timed = 0;
  double end = t0;
  for (std::size_t s = 0; s < done.size(); ++s) done[s].resize(timed_in[s]);
  for (const auto& lane : done) {
    timed += lane.size();
    if (!lane.empty()) end = std::max(end, lane.back().end);
  }
  r.lanes = std::move(done);
  r.makespan_s = end - t0;
  r.events = timed;
  r.net = net;
  return r;
}

}  // namespace

RunResult run_program_direct(const StepProgram& p, double t0, NetworkModel& network) {
  const std::size_t S = p.streams.size();
  std::vector<std::size_t> pc(S, 0);
  std::vector<double> clock(S, t0);
  const auto E = static_cast<std::size_t>(std::max(0, p.event_count));
  std::vector<double> recorded_at(E, std::numeric_limits<double>::quiet_NaN());
  // Each stream's timed ops are written by index into its lane, sized for every op up front and
  // cut to the count at the end: no growth check or call per op.
  std::vector<std::vector<OpTiming>> done(S);
  std::vector<std::size_t> timed_in(S, 0);
  for (std::size_t s = 0; s < S; ++s) done[s].resize(p.streams[s].ops.size());
  const auto C = p.collectives.size();
  const CollectiveClasses classes(p);
  const std::vector<std::pair<double, NetStats>> class_cost = class_costs(p, classes, network);
  NetStats net;  // what the collectives add, op by op in schedule order
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < S; ++s) {
      const StepOp* ops = p.streams[s].ops.data();
      const std::size_t n = p.streams[s].ops.size();
      std::size_t i = pc[s];
      if (i == n) continue;
      const std::size_t first = i;
      OpTiming* lane = done[s].data();
      std::size_t w = timed_in[s];
      double t = clock[s];
      for (; i < n; ++i) {
        const StepOp& op = ops[i];
        if (op.kind == OpKind::Record) {
          if (static_cast<std::size_t>(op.event) >= E) reject(p);
          recorded_at[static_cast<std::size_t>(op.event)] = t;
        } else if (op.kind == OpKind::Wait) {
          if (static_cast<std::size_t>(op.event) >= E) reject(p);
          const double r = recorded_at[static_cast<std::size_t>(op.event)];
          if (r != r) break;  // not recorded yet (NaN)
          if (r > t) t = r;
        } else {
          double d;
          if (op.kind == OpKind::Collective) {
            const auto k = static_cast<std::size_t>(op.collective);
            if (k >= C) reject(p);
            const auto& [time_s, stats] = class_cost[classes.of(k)];
            d = time_s;
            net += stats;
          } else {
            if (!(op.duration_s >= 0)) reject(p);
            d = op.duration_s;
          }
          lane[w++] = OpTiming{static_cast<int>(s), static_cast<int>(i), t, t + d};
          t += d;
        }
      }
      progress = progress || i != first;
      pc[s] = i;
      timed_in[s] = w;
      clock[s] = t;
    }
  }
  check_all_done(p, pc);
  network.account(net);
  return result_of(std::move(done), timed_in, t0, net);
}

}  // namespace zerosim
