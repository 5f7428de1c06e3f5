// resume_program: a program that begins as another goes on from a snapshot of the other's run and
// gives the result of its own run from the start, bit for bit (lanes, makespan, engine events,
// network stats), with and without SM sharing; a program that does not begin so, or a run that is
// not quiescent at the capture event, is refused. The stub network charges bytes / 1e9 s.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "sim/program/step_program.hpp"
#include "tests/program/program_ops.hpp"
#include "tests/program/stub_network.hpp"

using namespace zerosim;
using namespace zerosim::testing;

namespace {

constexpr int kBoundary = 1;  // the event the compute stream records at the end of micro-step 0

// Micro-step 0 then the optimizer. "comm" gathers 2 s and records event 0 (the compute stream
// waits for it, then records the boundary); "late" waits for the boundary; "host" runs 0.1 s and
// ends.
StepProgram one_step() {
  StepProgram p;
  p.event_count = 2;
  p.collectives = {bytes_op(2e9)};
  p.streams = {{"compute", {compute(1), wait(0), record(kBoundary), compute(0.5)}},
               {"comm", {coll(0), record(0)}},
               {"late", {wait(kBoundary)}},
               {"host", {compute(0.1)}}};
  return p;
}

// The same micro-step 0, then micro-step 1: "comm" (which one_step ran to its end) waits for the
// boundary and gathers again; "host" (also ended there) waits for an event "late" records.
StepProgram two_steps() {
  StepProgram p;
  p.event_count = 5;
  p.collectives = {bytes_op(2e9), bytes_op(0.75e9)};
  p.streams = {
      {"compute",
       {compute(1), wait(0), record(kBoundary), compute(1), wait(2), record(3), compute(0.5)}},
      {"comm", {coll(0), record(0), wait(kBoundary), coll(1), record(2)}},
      {"late", {wait(kBoundary), compute(0.25), record(4)}},
      {"host", {compute(0.1), wait(4), compute(0.2)}}};
  return p;
}

SmShare shares(const StepProgram& p, bool on) {
  SmShare s;
  if (!on) return s;
  s.gpu_sms = 100;
  s.collective_sms.assign(p.collectives.size(), 20);
  return s;
}

RunSnapshot snapshot_of(const StepProgram& p, const SmShare& share) {
  Engine e;
  StubNetwork net(e);
  RunSnapshot snap;
  run_program_on_engine(p, e, net, share, kBoundary, &snap);
  return snap;
}

void check_same(const RunResult& a, const RunResult& b) {
  CHECK(a.makespan_s == b.makespan_s);
  CHECK(a.events == b.events);
  CHECK(a.net.inter_node_bytes == b.net.inter_node_bytes);
  CHECK(a.net.flows == b.net.flows);
  REQUIRE(a.lanes.size() == b.lanes.size());
  for (std::size_t s = 0; s < a.lanes.size(); ++s) CHECK(a.lanes[s] == b.lanes[s]);
}

}  // namespace

TEST_CASE("a program that begins as another goes on from its snapshot, bit for bit") {
  for (const bool sm : {false, true}) {
    CAPTURE(sm);
    const StepProgram one = one_step(), two = two_steps();
    const RunSnapshot snap = snapshot_of(one, shares(one, sm));
    REQUIRE(snap.event == kBoundary);
    CHECK(snap.now == 2.0);  // the gather's end: the compute stream records the boundary then

    Engine e_full;
    StubNetwork net_full(e_full);
    const RunResult full = run_program_on_engine(two, e_full, net_full, shares(two, sm));

    Engine e;
    StubNetwork net(e);
    const std::optional<RunResult> resumed =
        resume_program(two, one, snap, e, net, shares(two, sm));
    REQUIRE(resumed.has_value());
    check_same(*resumed, full);
    // Closed form without sharing: micro-step 1's gather ends at 2 + 0.75, the compute stream's
    // second compute at 3; then the optimizer: 3.5. The host's wait ends at 2 + 0.25.
    if (!sm) {
      CHECK(full.makespan_s == 3.5);
      REQUIRE(full.lanes[3].size() == 2);
      CHECK(full.lanes[3][1].start == 2.25);
    }
    // Fewer engine events ran: only those after the snapshot.
    CHECK(e.events_processed() < e_full.events_processed());
  }
}

TEST_CASE("a program that does not begin as the snapshot's is refused, nothing run") {
  const StepProgram one = one_step();
  const RunSnapshot snap = snapshot_of(one, {});
  REQUIRE(snap.event == kBoundary);
  const auto refused = [&](const StepProgram& p) {
    Engine e;
    StubNetwork net(e);
    const bool none = !resume_program(p, one, snap, e, net).has_value();
    CHECK(e.now() == 0.0);
    CHECK(e.events_processed() == 0);
    return none;
  };
  StepProgram longer_compute = two_steps();
  longer_compute.streams[0].ops[0].duration_s = 1.5;
  CHECK(refused(longer_compute));
  StepProgram other_gather = two_steps();
  other_gather.collectives[0].bytes = 3e9;
  CHECK(refused(other_gather));
  // "host" ended in one_step; here its next op would have started when it ended, not waited.
  StepProgram host_runs_on = two_steps();
  host_runs_on.streams[3].ops[1] = compute(0.3);
  CHECK(refused(host_runs_on));
  // ... or it waits for an event that was recorded before the snapshot: it would not have waited.
  StepProgram recorded_wait = two_steps();
  recorded_wait.streams[3].ops[1] = wait(0);
  CHECK(refused(recorded_wait));
  StepProgram fewer_streams = two_steps();
  fewer_streams.streams.pop_back();
  CHECK(refused(fewer_streams));
  StepProgram renamed = two_steps();
  renamed.streams[2].name = "other";
  CHECK(refused(renamed));
  // The snapshot handed with another source than the program it was taken of.
  Engine e;
  StubNetwork net(e);
  CHECK(!resume_program(two_steps(), two_steps(), snap, e, net).has_value());
}

TEST_CASE("no snapshot where the run is not quiescent at the capture event") {
  // "busy" computes across the boundary (2 s): an engine event is pending when it is recorded.
  StepProgram p = one_step();
  p.streams.push_back({"busy", {compute(5)}});
  const RunSnapshot snap = snapshot_of(p, {});
  CHECK(snap.event == -1);
}
