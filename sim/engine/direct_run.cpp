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
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine/step_program.hpp"

namespace zerosim {

RunResult run_program_direct(const StepProgram& p, double t0, NetworkModel& network) {
  const std::size_t S = p.streams.size();
  std::vector<std::size_t> pc(S, 0);
  std::vector<double> clock(S, t0);
  const auto E = static_cast<std::size_t>(std::max(0, p.event_count));
  std::vector<double> recorded_at(E, std::numeric_limits<double>::quiet_NaN());
  std::vector<std::vector<OpTiming>> done(S);
  for (std::size_t s = 0; s < S; ++s) done[s].reserve(p.streams[s].ops.size());
  const auto C = p.collectives.size();
  auto reject = [&] {
    validate_program(p);  // throws for this op, or for an earlier one
    throw std::logic_error("run_program: malformed program");  // not reached
  };
  // One cost per collective class, asked for when first needed (every op its own class when the
  // program has none). A class's members are trusted to be equal (validate_program checks that;
  // lower_step's are, test_direct_run), its range is checked as ops reach it.
  struct ClassCost {
    bool known = false;
    double time_s = 0;
    NetStats stats;
  };
  const bool classed = !p.collective_class.empty();
  if (classed && p.collective_class.size() != C) reject();
  std::vector<ClassCost> class_cost(
      classed ? static_cast<std::size_t>(std::max(0, p.collective_classes)) : 0);
  NetStats net;  // what the collectives add, op by op in schedule order
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < S; ++s) {
      const StepOp* ops = p.streams[s].ops.data();
      const std::size_t n = p.streams[s].ops.size();
      std::size_t i = pc[s];
      if (i == n) continue;
      const std::size_t first = i;
      auto& lane = done[s];
      double t = clock[s];
      for (; i < n; ++i) {
        const StepOp& op = ops[i];
        if (op.kind == OpKind::Record) {
          if (static_cast<std::size_t>(op.event) >= E) reject();
          recorded_at[static_cast<std::size_t>(op.event)] = t;
        } else if (op.kind == OpKind::Wait) {
          if (static_cast<std::size_t>(op.event) >= E) reject();
          const double r = recorded_at[static_cast<std::size_t>(op.event)];
          if (r != r) break;  // not recorded yet (NaN)
          if (r > t) t = r;
        } else {
          double d;
          if (op.kind == OpKind::Collective) {
            const auto k = static_cast<std::size_t>(op.collective);
            if (k >= C) reject();
            const CollectiveOp& coll = p.collectives[k];
            if (classed) {
              const auto j = static_cast<std::size_t>(p.collective_class[k]);
              if (j >= class_cost.size()) reject();
              ClassCost& c = class_cost[j];
              if (!c.known) {
                std::tie(c.time_s, c.stats) = network.cost(coll);
                c.known = true;
              }
              d = c.time_s;
              net += c.stats;
            } else {
              const auto [time_s, stats] = network.cost(coll);
              d = time_s;
              net += stats;
            }
          } else {
            if (!(op.duration_s >= 0)) reject();
            d = op.duration_s;
          }
          lane.push_back(OpTiming{static_cast<int>(s), static_cast<int>(i), t, t + d});
          t += d;
        }
      }
      progress = progress || i != first;
      pc[s] = i;
      clock[s] = t;
    }
  }
  for (std::size_t s = 0; s < S; ++s)
    if (pc[s] < p.streams[s].ops.size()) {
      validate_program(p);  // a malformed op the schedule did not reach is reported first
      throw std::logic_error(deadlock_message(p, s, pc[s]));
    }
  RunResult r;
  std::size_t timed = 0;
  // A lane's ops end in order, so the step ends at the latest of the lanes' last ends.
  double end = t0;
  for (const auto& lane : done) {
    timed += lane.size();
    if (!lane.empty()) end = std::max(end, lane.back().end);
  }
  r.lanes = std::move(done);
  r.makespan_s = end - t0;
  r.events = timed;
  network.account(net);
  r.net = net;
  return r;
}

}  // namespace zerosim
