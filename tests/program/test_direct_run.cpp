// run_program_direct (the one-pass schedule for contention-free networks) against the event-driven
// run on the engine: identical start and end times for every op, makespan, event count and network
// stats, over random deadlock-free programs on a contention-free stub network; its timeline is in
// completion order; a deadlock is reported the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "sim/program/step_program.hpp"
#include "sim/step/lower.hpp"
#include "tests/program/stub_network.hpp"
#include "tests/step/gpt18b_setup.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {

// Ops emitted in one global order into random streams; every Wait names an event recorded earlier
// in that order, so running the ops in that order is a valid schedule: no deadlock.
StepProgram random_program(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> streams_d(1, 4), kind_d(0, 5), len_d(10, 200);
  std::uniform_real_distribution<double> dur(0, 1e-3);
  StepProgram p;
  const int S = streams_d(rng);
  for (int s = 0; s < S; ++s) p.streams.push_back({"s" + std::to_string(s), {}});
  std::uniform_int_distribution<int> stream_d(0, S - 1);
  const int n = len_d(rng);
  for (int i = 0; i < n; ++i) {
    auto& ops = p.streams[static_cast<std::size_t>(stream_d(rng))].ops;
    switch (kind_d(rng)) {
      case 0:
        ops.push_back({OpKind::Compute, Category::Compute, dur(rng), -1, -1, -1});
        break;
      case 1:
        ops.push_back(
            {OpKind::Kernel, Category::QuantKernel, rng() % 4 ? dur(rng) : 0.0, -1, -1, -1});
        break;
      case 2: {
        CollectiveOp c;
        c.bytes = dur(rng) * 1e9;
        p.collectives.push_back(c);
        ops.push_back({OpKind::Collective, Category::AllGather, 0,
                       static_cast<int>(p.collectives.size()) - 1, -1, -1});
        break;
      }
      case 3:
      case 4:
        ops.push_back({OpKind::Record, Category::Other, 0, -1, p.event_count++, -1});
        break;
      default:
        if (p.event_count > 0)
          ops.push_back({OpKind::Wait, Category::Other, 0, -1,
                         static_cast<int>(rng() % static_cast<unsigned>(p.event_count)), -1});
    }
  }
  return p;
}

// Both runs; every op's (start, end) must be identical, bit for bit.
template <class MakeNet>
void compare_runs(const StepProgram& p, MakeNet make_net) {
  Engine e1;
  auto n1 = make_net(e1);
  const RunResult a = run_program_on_engine(p, e1, *n1);
  Engine e2;
  auto n2 = make_net(e2);
  const RunResult b = run_program_direct(p, 0.0, *n2);
  CHECK(a.makespan_s == b.makespan_s);
  CHECK(a.events == b.events);
  CHECK(a.net.flows == b.net.flows);
  CHECK(a.net.inter_node_bytes == zerosim::testing::Approx(b.net.inter_node_bytes).epsilon(1e-12));
  CHECK(a.net.intra_node_bytes == zerosim::testing::Approx(b.net.intra_node_bytes).epsilon(1e-12));
  REQUIRE(a.lanes.size() == p.streams.size());
  REQUIRE(b.lanes.size() == p.streams.size());
  for (std::size_t s = 0; s < p.streams.size(); ++s) {
    CAPTURE(s);
    REQUIRE(a.lanes[s].size() == b.lanes[s].size());
    for (std::size_t i = 0; i < a.lanes[s].size(); ++i) {
      const OpTiming &x = a.lanes[s][i], &y = b.lanes[s][i];
      CHECK(x.stream == static_cast<int>(s));
      CHECK(y.stream == static_cast<int>(s));
      CHECK(x.op == y.op);
      CHECK(x.start == y.start);
      CHECK(x.end == y.end);
      if (i > 0) CHECK(y.op > b.lanes[s][i - 1].op);  // program order
    }
  }
  const auto timeline = completion_order(b);
  CHECK(timeline.size() == b.events);
  for (std::size_t i = 1; i < timeline.size(); ++i) {
    const OpTiming &x = timeline[i - 1], &y = timeline[i];
    CHECK(x.end <= y.end);  // completion order, ties by start
    if (x.end == y.end) CHECK(x.start <= y.start);
  }
}

}  // namespace

TEST_CASE("random deadlock-free programs: the direct schedule equals the engine's") {
  std::mt19937_64 rng(20261202);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    const StepProgram p = random_program(rng);
    compare_runs(p, [](Engine& e) { return std::make_unique<StubNetwork>(e, true); });
  }
}

TEST_CASE("run_program dispatches contention-free networks to the direct schedule") {
  StepProgram p;
  p.event_count = 1;
  CollectiveOp c;
  c.bytes = 2e9;  // 2 s on the stub
  p.collectives.push_back(c);
  p.streams = {{"a",
                {{OpKind::Compute, Category::Compute, 1.0, -1, -1, -1},
                 {OpKind::Record, Category::Other, 0, -1, 0, -1}}},
               {"b",
                {{OpKind::Wait, Category::Other, 0, -1, 0, -1},
                 {OpKind::Collective, Category::AllGather, 0, 0, -1, -1}}}};
  Engine e;
  StubNetwork net(e, true);
  const RunResult r = run_program(p, e, net);
  CHECK(r.makespan_s == 3.0);
  CHECK(e.events_processed() == 0);  // nothing ran on the engine
  CHECK(r.events == 2);
}

TEST_CASE("a wait whose record never runs is a deadlock in the direct schedule too") {
  StepProgram p;
  p.event_count = 2;
  p.streams = {{"a", {{OpKind::Wait, Category::Other, 0, -1, 1, -1}}},
               {"b", {{OpKind::Record, Category::Other, 0, -1, 0, -1}}}};
  Engine e;
  StubNetwork net(e, true);
  try {
    run_program_direct(p, 0.0, net);
    FAIL("expected a deadlock error");
  } catch (const std::logic_error& err) {
    CHECK(std::string(err.what()).find("deadlock") != std::string::npos);
    CHECK(std::string(err.what()).find("event 1") != std::string::npos);
  }
}

TEST_CASE("malformed programs get validate_program's error from the direct schedule") {
  // The direct schedule checks ops as it reaches them: the error must be the same as a check of the
  // whole program before running, including for ops it never reaches (behind a deadlock).
  auto error_of = [](const StepProgram& p) {
    Engine e;
    StubNetwork net(e, true);
    try {
      run_program_direct(p, 0.0, net);
    } catch (const std::logic_error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  auto expected = [](const StepProgram& p) {
    try {
      validate_program(p);
    } catch (const std::logic_error& err) {
      return std::string(err.what());
    }
    return std::string("valid");
  };
  const StepOp compute{OpKind::Compute, Category::Compute, 1.0, -1, -1, -1};
  std::vector<StepProgram> cases(6);
  // A collective index out of range after ops that run.
  cases[0].streams = {
      {"a", {compute, compute, {OpKind::Collective, Category::AllGather, 0, 3, -1, -1}}}};
  // A negative duration on the second stream.
  cases[1].streams = {{"a", {compute}},
                      {"b", {compute, {OpKind::Kernel, Category::Other, -1.0, -1, -1, -1}}}};
  // A stuck wait on stream a, and a record of an event out of range on stream b behind it.
  cases[2].event_count = 2;
  cases[2].streams = {{"a", {{OpKind::Wait, Category::Other, 0, -1, 1, -1}, compute}},
                      {"b",
                       {compute,
                        {OpKind::Wait, Category::Other, 0, -1, 1, -1},
                        {OpKind::Record, Category::Other, 0, -1, 7, -1}}}};
  // A wait on a negative event.
  cases[3].event_count = 1;
  cases[3].streams = {{"a", {compute, {OpKind::Wait, Category::Other, 0, -1, -1, -1}}}};
  // Collective classes: one too few; one out of range.
  const StepOp gather0{OpKind::Collective, Category::AllGather, 0, 0, -1, -1};
  const StepOp gather1{OpKind::Collective, Category::AllGather, 0, 1, -1, -1};
  for (std::size_t i = 4; i < 6; ++i) {
    cases[i].collectives.resize(2);
    cases[i].streams = {{"a", {compute, gather0, compute, gather1}}};
    cases[i].collective_classes = 2;
  }
  cases[4].collective_class = {0};
  cases[5].collective_class = {0, 2};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const std::string want = expected(cases[i]);
    CHECK(want != "valid");
    CHECK(error_of(cases[i]) == want);
  }
  // Valid but stuck: the deadlock message.
  StepProgram stuck;
  stuck.event_count = 1;
  stuck.streams = {{"a", {compute, {OpKind::Wait, Category::Other, 0, -1, 0, -1}}}};
  CHECK(expected(stuck) == "valid");
  CHECK(error_of(stuck).find("deadlock") != std::string::npos);
}

TEST_CASE("collective classes: one cost per class, the same schedule as without classes") {
  // A network that counts the costs it is asked for.
  struct CountingStub : StubNetwork {
    using StubNetwork::StubNetwork;
    int asked = 0;
    std::pair<double, NetStats> cost(const CollectiveOp& op) override {
      ++asked;
      return StubNetwork::cost(op);
    }
  };
  for (const char* strategy : {"zero3", "zeropp", "zero3+qgz"}) {
    CAPTURE(strategy);
    auto topo = load_cluster("dgx2-v100", ClusterOverrides{3, 4, 100, "", 0});
    auto prof = select_cost_profile("", topo);
    StepSetup st = gpt18b_setup(strategy, 2048, 2048, 2);
    st.strategy.qgz_chunks = 2;
    const LoweredStep low = lower_step(st, topo, prof);
    const StepProgram& with = low.program;
    CHECK_NOTHROW(validate_program(with));  // members of a class are equal
    // Every layer repeats its collectives: far fewer classes than collectives.
    REQUIRE(with.collective_class.size() == with.collectives.size());
    CHECK(with.collective_classes * 10 < static_cast<int>(with.collectives.size()));
    StepProgram without = with;
    without.collective_class.clear();
    without.collective_classes = 0;
    Engine e1, e2;
    CountingStub n1(e1, true), n2(e2, true);
    const RunResult a = run_program_direct(with, 0.0, n1);
    const RunResult b = run_program_direct(without, 0.0, n2);
    CHECK(n1.asked == with.collective_classes);
    CHECK(n2.asked == static_cast<int>(with.collectives.size()));
    CHECK(a.makespan_s == b.makespan_s);
    CHECK(a.net.inter_node_bytes == b.net.inter_node_bytes);  // same additions, same order
    CHECK(a.net.flows == b.net.flows);
    CHECK(n1.stats().inter_node_bytes == a.net.inter_node_bytes);  // accounted to the network
    CHECK(a.lanes == b.lanes);  // every op's start and end, bit for bit
  }
}
