// run_program on hand-built programs whose makespan is a closed form. A stub network charges every
// collective a fixed time per CollectiveOp::bytes, so only the program semantics are under test.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/program/step_program.hpp"
#include "tests/program/program_ops.hpp"
#include "tests/program/stub_network.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using namespace zerosim::testing;

TEST_CASE("two independent streams overlap: makespan is the longer stream") {
  // Stream A: 1 + 2 s compute; stream B: 0.5 + 0.5 + 0.5 s kernels. Makespan = max(3, 1.5) = 3.
  StepProgram p;
  p.streams = {{"a", {compute(1), compute(2)}}, {"b", {kernel(0.5), kernel(0.5), kernel(0.5)}}};
  Engine e;
  StubNetwork net(e);
  RunResult r = run_program(p, e, net);
  CHECK(r.makespan_s == zerosim::testing::Approx(3.0));
  REQUIRE(r.lanes.size() == 2);
  CHECK(r.lanes[0].size() == 2);
  CHECK(r.lanes[1].size() == 3);
  const auto timeline = completion_order(r);
  REQUIRE(timeline.size() == 5);
  // Completion order: b0 (0.5), a0 (1.0) / b1 (1.0) (a0 first: it started earlier), b2 (1.5),
  // a1 (3.0).
  const int order[][2] = {{1, 0}, {0, 0}, {1, 1}, {1, 2}, {0, 1}};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(timeline[i].stream == order[i][0]);
    CHECK(timeline[i].op == order[i][1]);
  }
  CHECK(timeline.back().start == zerosim::testing::Approx(1.0));
}

TEST_CASE("a wait chain serializes streams") {
  // A: compute 1, record e0. B: wait e0, compute 2, record e1. C: wait e1, compute 3.
  // Makespan = 1 + 2 + 3 = 6; C's compute starts at 3.
  StepProgram p;
  p.event_count = 2;
  p.streams = {{"a", {compute(1), record(0)}},
               {"b", {wait(0), compute(2), record(1)}},
               {"c", {wait(1), compute(3)}}};
  Engine e;
  StubNetwork net(e);
  RunResult r = run_program(p, e, net);
  CHECK(r.makespan_s == zerosim::testing::Approx(6.0));
  const auto timeline = completion_order(r);
  REQUIRE(timeline.size() == 3);
  CHECK(timeline[2].stream == 2);
  CHECK(timeline[2].start == zerosim::testing::Approx(3.0));
}

TEST_CASE("a collective overlaps compute; the consumer waits for it") {
  // Comm stream: all-gather of 2e9 bytes (2 s), record e0. Compute stream: compute 1.5, wait e0,
  // compute 1. The wait releases at 2, so makespan = 2 + 1 = 3 (exposed communication 0.5 s).
  StepProgram p;
  p.event_count = 1;
  p.collectives = {bytes_op(2e9)};
  p.streams = {{"compute", {compute(1.5), wait(0), compute(1)}}, {"comm", {coll(0), record(0)}}};
  Engine e;
  StubNetwork net(e);
  RunResult r = run_program(p, e, net);
  CHECK(r.makespan_s == zerosim::testing::Approx(3.0));
  CHECK(r.net.inter_node_bytes == zerosim::testing::Approx(2e9));
  CHECK(r.net.flows == 1);
}

TEST_CASE("prefetch pattern: n layers, compute c, gather g > c overlapped one ahead") {
  // Gathers on stream "ag" run back to back, each recording e_i; compute i waits e_i then computes
  // c. With g = 0.3, c = 0.2, n = 4: gathers end at 0.3 i; compute i starts at max(0.3 (i+1), end
  // of compute i-1) -> the last compute starts at 1.2 and ends at 1.4.
  const int n = 4;
  StepProgram p;
  p.event_count = n;
  Stream ag{"ag", {}}, comp{"compute", {}};
  for (int i = 0; i < n; ++i) {
    p.collectives.push_back(bytes_op(0.3e9));
    ag.ops.push_back(coll(i));
    ag.ops.push_back(record(i));
    comp.ops.push_back(wait(i));
    comp.ops.push_back(compute(0.2));
  }
  p.streams = {comp, ag};
  Engine e;
  StubNetwork net(e);
  CHECK(run_program(p, e, net).makespan_s == zerosim::testing::Approx(1.4));
}

TEST_CASE("a wait whose record never runs is a deadlock") {
  StepProgram p;
  p.event_count = 2;
  p.streams = {{"a", {wait(1), compute(1)}}, {"b", {compute(1), record(0)}}};
  Engine e;
  StubNetwork net(e);
  try {
    run_program(p, e, net);
    FAIL("expected a deadlock error");
  } catch (const std::logic_error& err) {
    CHECK(std::string(err.what()).find("deadlock") != std::string::npos);
    CHECK(std::string(err.what()).find("event 1") != std::string::npos);
  }
}

TEST_CASE("out-of-range references are rejected before running") {
  StepProgram p;
  p.streams = {{"a", {coll(0)}}};
  Engine e;
  StubNetwork net(e);
  CHECK_THROWS_AS(run_program(p, e, net), std::logic_error);
}

TEST_CASE("category names") {
  CHECK(std::string(to_string(Category::AllGather)) == "all_gather");
  CHECK(std::string(to_string(Category::QuantKernel)) == "quant_kernel");
}

TEST_CASE("collective classes: validate_program checks their count, range and equal members") {
  StepProgram p;
  p.collectives = {bytes_op(1e9), bytes_op(1e9), bytes_op(2e9)};
  p.streams = {{"a", {coll(0), coll(1), coll(2)}}};
  p.collective_classes = 2;
  auto error_of = [&] {
    try {
      validate_program(p);
    } catch (const std::logic_error& err) {
      return std::string(err.what());
    }
    return std::string("valid");
  };
  p.collective_class = {0, 0, 1};
  CHECK(error_of() == "valid");
  p.collective_class = {0, 0};
  CHECK(error_of() == "run_program: 2 collective classes for 3 collectives");
  p.collective_class = {0, 0, 2};
  CHECK(error_of() == "run_program: collective 2 has class 2 outside [0, collective_classes)");
  p.collective_class = {0, 1, 0};  // 0 and 2 differ in bytes
  CHECK(error_of() == "run_program: collectives 0 and 2 share class 0 but differ");
  // A class no collective has is allowed (nothing to price for it).
  p.collective_class = {0, 0, 1};
  p.collective_classes = 3;
  CHECK(error_of() == "valid");
  const CollectiveClasses classes(p);
  CHECK(classes.first() == std::vector<int>{0, 2, -1});
  CHECK(classes.of(1) == 0);
  CHECK(classes.of(2) == 1);
  // A valid program runs with one cost per class on either path.
  for (bool direct : {false, true}) {
    Engine e;
    StubNetwork net(e, direct);
    const RunResult r = run_program(p, e, net);
    CHECK(r.makespan_s == zerosim::testing::Approx(4.0));
    CHECK(r.net.inter_node_bytes == 4e9);
  }
}

// SM sharing: a compute op of duration d starting with a collective of duration c that holds k of
// the GPU's S SMs runs at rate (S - k) / S while the collective is live, at 1 after.
namespace {
RunResult run_shared(StepProgram& p, double k, int S) {
  SmShare share;
  share.gpu_sms = S;
  share.collective_sms.assign(p.collectives.size(), k);
  Engine e;
  StubNetwork net(e, true);  // contention-free: sharing runs on the engine all the same
  return run_program(p, e, net, share);
}
}  // namespace

TEST_CASE("SM sharing: a compute op inside a collective stretches by S / (S - k)") {
  // d = 1 s, c = 2 s, k = 16 of S = 80: the op needs d S / (S - k) = 1.25 s <= c.
  StepProgram p;
  p.collectives = {bytes_op(2e9)};
  p.streams = {{"compute", {compute(1)}}, {"allgather", {coll(0)}}};
  const RunResult r = run_shared(p, 16, 80);
  CHECK(r.lanes[0][0].end == zerosim::testing::Approx(1.0 * 80 / 64));
  CHECK(r.lanes[1][0].end == zerosim::testing::Approx(2.0));
}

TEST_CASE("SM sharing: a compute op outlasting the collective gains c k / S") {
  // d = 3 s, c = 1 s: c (S - k) / S of the work is done while it is live, the rest at full rate:
  // end = c + d - c (S - k) / S = d + c k / S = 3.2 s.
  StepProgram p;
  p.collectives = {bytes_op(1e9)};
  p.streams = {{"compute", {compute(3)}}, {"allgather", {coll(0)}}};
  const RunResult r = run_shared(p, 16, 80);
  CHECK(r.lanes[0][0].end == zerosim::testing::Approx(3.0 + 1.0 * 16 / 80));
  CHECK(r.makespan_s == zerosim::testing::Approx(3.2));
}

TEST_CASE("SM sharing: a collective starting mid-op charges only the overlap") {
  // Compute 2 s from 0; a 0.5 s kernel then a 1 s collective on another stream (0.5 .. 1.5):
  // end = d + c k / S = 2 + 1 * 40 / 100 = 2.4 s (S = 100, k = 40). The kernel at 0 .. 0.5 runs
  // alongside no collective.
  StepProgram p;
  p.collectives = {bytes_op(1e9)};
  p.streams = {{"compute", {compute(2)}}, {"side", {kernel(0.5), coll(0)}}};
  const RunResult r = run_shared(p, 40, 100);
  CHECK(r.lanes[0][0].end == zerosim::testing::Approx(2.4));
  CHECK(r.lanes[1][0].end == zerosim::testing::Approx(0.5));
  CHECK(r.lanes[1][1].end == zerosim::testing::Approx(1.5));
}

TEST_CASE("SM sharing: contention-free and event-driven networks give the same schedule") {
  StepProgram p;
  p.event_count = 1;
  p.collectives = {bytes_op(1e9), bytes_op(0.5e9)};
  p.streams = {{"compute", {compute(2), record(0), compute(1)}},
               {"allgather", {coll(0), wait(0), coll(1)}}};
  SmShare share;
  share.gpu_sms = 108;
  share.collective_sms = {16, 8};
  Engine e1, e2;
  StubNetwork free_net(e1, true), engine_net(e2, false);
  const RunResult a = run_program(p, e1, free_net, share);
  const RunResult b = run_program(p, e2, engine_net, share);
  CHECK(a.lanes == b.lanes);
  // compute 0: 2 + 1 * 16 / 108; collective 1 then overlaps compute 2 for its 0.5 s.
  const double t1 = 2 + 16.0 / 108;
  CHECK(a.lanes[0][0].end == zerosim::testing::Approx(t1));
  CHECK(a.lanes[0][1].end == zerosim::testing::Approx(t1 + 1 + 0.5 * 8 / 108));
}

TEST_CASE("SM sharing: no overlap leaves every op unchanged") {
  // Compute 1 s, then (event) a 2 s collective: ends 1 and 3, as without sharing.
  StepProgram p;
  p.event_count = 1;
  p.collectives = {bytes_op(2e9)};
  p.streams = {{"compute", {compute(1), record(0)}}, {"allgather", {wait(0), coll(0)}}};
  const RunResult r = run_shared(p, 16, 80);
  CHECK(r.lanes[0][0].end == 1.0);
  CHECK(r.lanes[1][0].start == 1.0);
  CHECK(r.makespan_s == 3.0);
}

TEST_CASE("SM sharing: host and copy-engine work is not stretched") {
  StepProgram p;
  p.collectives = {bytes_op(2e9)};
  p.streams = {{"copy", {StepOp{OpKind::Kernel, Category::OffloadCopy, 1, -1, -1, -1}}},
               {"allgather", {coll(0)}}};
  const RunResult r = run_shared(p, 16, 80);
  CHECK(r.lanes[0][0].end == 1.0);
}

TEST_CASE("SM sharing: two SM-bound ops across collectives: closed-form ends, one event a move") {
  // S = 100, collectives of 1 s holding k = 20 SMs (rate 0.8) back to back from 0; a 2 s compute
  // op and a 1 s kernel from 0. Work done: 0.8 per second a collective runs, 1 else.
  // Kernel: 0.8 by t = 1, 0.2 left at 0.8: ends 1.25. Compute: 1.6 by t = 2, 0.4 left: ends 2.4.
  // Each collective start and end moves the end of every SM-bound op running then, and each move
  // counts as the cancelled event it replaces: 2 (start 0) + 2 (end 1) + 2 (start 1) + 1 (end 2)
  // = 7 moves, on top of one event per op (2 SM-bound ops, 2 collectives): 11.
  StepProgram p;
  p.collectives = {bytes_op(1e9), bytes_op(1e9)};
  p.streams = {{"compute", {compute(2)}}, {"side", {kernel(1)}}, {"comm", {coll(0), coll(1)}}};
  const RunResult r = run_shared(p, 20, 100);
  CHECK(r.lanes[0][0].end == zerosim::testing::Approx(2.4));
  CHECK(r.lanes[1][0].end == zerosim::testing::Approx(1.25));
  CHECK(r.lanes[2][1].end == zerosim::testing::Approx(2.0));
  CHECK(r.events == 4 + 7);
}

TEST_CASE("SM sharing: a collective holding every SM stalls the op; its restart is not a move") {
  // S = 100; a collective of 0.5 s holding all 100 SMs from 0 stops a 1 s compute op, which
  // resumes at 0.5 and ends at d + c = 1.5. Its end, queued at 0, is dropped at the collective's
  // start (one move) and queued afresh at its end (none): 2 ops + 1 move = 3 events.
  StepProgram p;
  p.collectives = {bytes_op(0.5e9)};
  p.streams = {{"compute", {compute(1)}}, {"comm", {coll(0)}}};
  const RunResult r = run_shared(p, 100, 100);
  CHECK(r.lanes[0][0].end == 1.5);
  CHECK(r.events == 2 + 1);
}

TEST_CASE("SM sharing: an end equal to a collective's runs in the order its key was taken") {
  // S = 100, k = 20 (rate 0.8); ops of 0.4 and 0.8 s and a 1 s collective from 0, in stream order.
  // The collective's start keys their ends (0.5 and 1.0) before its own end (1.0) is queued, so
  // the 0.8 s op ends first at 1.0 and the collective's end moves nothing: 3 ops + 2 moves (its
  // start) = 5 events. Run the other way round, its end would move the op once more: 6.
  StepProgram p;
  p.collectives = {bytes_op(1e9)};
  p.streams = {{"a", {compute(0.4)}}, {"b", {compute(0.8)}}, {"comm", {coll(0)}}};
  const RunResult r = run_shared(p, 20, 100);
  CHECK(r.lanes[0][0].end == 0.5);
  CHECK(r.lanes[1][0].end == 1.0);
  CHECK(r.lanes[2][0].end == 1.0);
  CHECK(r.events == 3 + 2);
}

TEST_CASE("SM sharing: a share list of another length than the collectives' is rejected") {
  StepProgram p;
  p.collectives = {bytes_op(1e9)};
  p.streams = {{"allgather", {coll(0)}}};
  SmShare share;
  share.gpu_sms = 80;
  Engine e;
  StubNetwork net(e);
  CHECK_THROWS_AS(run_program(p, e, net, share), std::logic_error);
}
