// Running sweeps: results by index regardless of threads, equal to one-by-one runs, partial file
// and resume, error propagation (lowest failing index, InputError kept).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>

#include "fake_results.hpp"
#include "sim/core/error.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::sweep;
namespace fs = std::filesystem;

namespace {

std::vector<Scenario> grid() {
  return expand(Scenario{},
                {{"--nodes", {"1", "24"}},
                 {"--tokens-per-gpu", {"1024", "2048"}},
                 {"--nics-per-node", {"1", "2", "4", "8"}},
                 {"--nic-gbps", {"100"}},
                 {"--strategy", {"zero3", "zero3+qwz", "zero3+hpz", "zero3+qgz", "zeropp"}}});
}

std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::string dump_all(const std::vector<std::optional<StepResult>>& r) {
  std::vector<StepResult> v;
  v.reserve(r.size());
  for (const auto& x : r) v.push_back(*x);
  return sweep_document(json::object(), v).dump();
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("zerosim_sweep_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("sweep results equal the runner called one by one, in scenario order") {
  auto s = grid();
  REQUIRE(s.size() == 80u);
  RunOptions opt;
  opt.threads = 3;
  auto r = run_scenarios(s, all_indices(s.size()), testing::fake_runner, opt);
  for (std::size_t i = 0; i < s.size(); ++i) {
    REQUIRE(r[i].has_value());
    CHECK(*r[i] == testing::fake_result(s[i]));
  }
}

TEST_CASE("1 thread and 8 threads give identical bytes") {
  auto s = grid();
  // A runner whose duration varies so threads finish out of order.
  auto jittery = [](const Scenario& sc, SimContext&) {
    volatile double x = 0;
    for (int k = 0; k < (sc.nics_per_node * 7919) % 50000; ++k) x = x + k;
    return testing::fake_result(sc);
  };
  RunOptions one, many;
  one.threads = 1;
  many.threads = 8;
  CHECK(dump_all(run_scenarios(s, all_indices(s.size()), jittery, one)) ==
        dump_all(run_scenarios(s, all_indices(s.size()), jittery, many)));
}

TEST_CASE("a subset of indices runs only those (the MPI split)") {
  auto s = grid();
  std::vector<std::size_t> odd;
  for (std::size_t i = 1; i < s.size(); i += 2) odd.push_back(i);
  auto r = run_scenarios(s, odd, testing::fake_runner, RunOptions{});
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(r[i].has_value() == (i % 2 == 1));
}

TEST_CASE("partial file keeps finished results; resume runs only the rest") {
  auto s = grid();
  fs::path dir = temp_dir();
  std::string partial = (dir / "out.json.partial").string();
  // First run fails at index 50 (single thread: indices 0..49 finished before it).
  auto failing = [&](const Scenario& sc, SimContext&) {
    if (scenario_to_json(sc) == scenario_to_json(s[50])) throw InputError("x.json", "/y", "boom");
    return testing::fake_result(sc);
  };
  RunOptions opt;
  opt.threads = 1;
  opt.partial_path = partial;
  const auto e = caught_input_error([&] { run_scenarios(s, all_indices(s.size()), failing, opt); });
  CHECK(e.file() == "x.json");
  CHECK(e.rule().find("sweep scenario #50") != std::string::npos);
  auto kept = read_partial(partial, s);
  CHECK(kept.size() == 50u);
  // Simulate a kill in the middle of writing the next line.
  { std::ofstream(partial, std::ios::app) << "{\"index\": 50, \"scen"; }
  CHECK(read_partial(partial, s).size() == 50u);

  std::atomic<int> calls{0};
  auto counting = [&](const Scenario& sc, SimContext&) {
    ++calls;
    return testing::fake_result(sc);
  };
  RunOptions resume;
  resume.threads = 4;
  resume.resume_from = {partial};
  auto r = run_scenarios(s, all_indices(s.size()), counting, resume);
  CHECK(calls.load() == 30);
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(*r[i] == testing::fake_result(s[i]));

  // A partial file of a different sweep is rejected, not silently mixed in.
  auto other = expand(Scenario{}, {{"--nodes", {"2", "3"}}});
  CHECK_THROWS_AS(read_partial(partial, other), InputError);
  fs::remove_all(dir);
}

TEST_CASE("the lowest failing index is reported; other exceptions keep their message") {
  auto s = grid();
  auto failing = [](const Scenario& sc, SimContext&) -> StepResult {
    if (sc.nics_per_node >= 4) throw std::runtime_error("bad nics");
    return testing::fake_result(sc);
  };
  RunOptions opt;
  opt.threads = 4;
  try {
    run_scenarios(s, all_indices(s.size()), failing, opt);
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    // Index 10 is the first with 4 NICs (nodes=1, tokens=1024, nics index 2, strategy 0).
    CHECK(std::string(e.what()).find("bad nics [in sweep scenario #10 ") != std::string::npos);
  }
}

TEST_CASE("with an invalid list, bad-input scenarios are listed by index and the rest run") {
  auto s = grid();
  auto picky = [](const Scenario& sc, SimContext& ctx) -> StepResult {
    if (sc.nics_per_node == 2) throw InputError("<command line>", "--nics-per-node", "two is bad");
    return testing::fake_runner(sc, ctx);
  };
  std::vector<InvalidScenario> one_thread, four_threads;
  RunOptions opt;
  opt.threads = 1;
  opt.invalid = &one_thread;
  auto r1 = run_scenarios(s, all_indices(s.size()), picky, opt);
  opt.threads = 4;
  opt.invalid = &four_threads;
  auto r4 = run_scenarios(s, all_indices(s.size()), picky, opt);
  CHECK(one_thread == four_threads);  // sorted by index whatever the threads
  std::size_t bad = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool expect_bad = s[i].nics_per_node == 2;
    bad += expect_bad;
    CHECK(r1[i].has_value() == !expect_bad);
    CHECK(r4[i].has_value() == !expect_bad);
  }
  REQUIRE(one_thread.size() == bad);
  REQUIRE(bad > 0);
  CHECK(one_thread.front().message == "<command line>: --nics-per-node: two is bad");
  for (std::size_t k = 1; k < one_thread.size(); ++k)
    CHECK(one_thread[k - 1].index < one_thread[k].index);
}

TEST_CASE("a lazy sweep materialises only the scenarios being run") {
  // 20000 scenarios decoded on demand: at most one per worker thread exists at any moment.
  std::vector<Axis> axes = {{"--nodes", {}}, {"--tokens-per-gpu", {}}};
  for (int v = 1; v <= 200; ++v) axes[0].values.push_back(std::to_string(v));
  for (int v = 1; v <= 100; ++v) axes[1].values.push_back(std::to_string(v * 512));  // seq 512
  const ScenarioSpace space(Scenario{}, axes);
  REQUIRE(space.size() == 20000u);
  std::mutex mu;
  std::size_t decoded = 0, finished = 0, peak = 0;
  const ScenarioAt counting = [&](std::size_t i) {
    std::lock_guard lock(mu);
    ++decoded;
    peak = std::max(peak, decoded - finished);
    return space.at(i);
  };
  std::vector<char> seen(space.size(), 0);
  RunOptions opt;
  opt.threads = 4;
  run_scenarios(space.size(), counting, all_indices(space.size()), testing::fake_runner, opt,
                [&](std::size_t i, StepResult&& r, std::uint64_t) {
                  std::lock_guard lock(mu);  // the counters are shared with the decoder
                  ++finished;
                  CHECK(r.scenario.nodes == space.at(i).nodes);
                  seen[i] = 1;
                });
  CHECK(decoded == space.size());
  CHECK(finished == space.size());
  CHECK(peak >= 1u);
  CHECK(peak <= 4u);
  CHECK(std::count(seen.begin(), seen.end(), 1) == 20000);
}

TEST_CASE("results read back from the partial file by offset give the same sweep document") {
  auto s = grid();
  fs::path dir = temp_dir();
  std::string partial = (dir / "lazy.json.partial").string();
  RunOptions opt;
  opt.threads = 3;
  opt.partial_path = partial;
  std::vector<std::uint64_t> offset(s.size(), 0);
  run_scenarios(
      s.size(), [&](std::size_t i) { return s[i]; }, all_indices(s.size()), testing::fake_runner,
      opt, [&](std::size_t i, StepResult&&, std::uint64_t at) { offset[i] = at; });
  std::ifstream in(partial, std::ios::binary);
  std::vector<StepResult> expected;
  expected.reserve(s.size());
  for (const auto& sc : s) expected.push_back(testing::fake_result(sc));
  const json axes = {{"nodes", {"1", "24"}}};
  // Scenarios 3 and 7 listed as invalid: the document leaves their results out.
  const std::vector<InvalidScenario> invalid = {{3, "x: y: bad"}, {7, "x: y: worse"}};
  std::vector<StepResult> kept;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i != 3 && i != 7) kept.push_back(expected[i]);
  for (const auto& bad : {std::vector<InvalidScenario>{}, invalid}) {
    std::string text;
    SweepDocumentStream doc(
        axes, bad, [&](std::size_t i) { return s[i]; },
        [&](std::string_view piece) { text += piece; });
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!bad.empty() && (i == 3 || i == 7)) continue;
      REQUIRE(offset[i] > 0u);
      doc.add(partial_result_at(in, offset[i]));
    }
    doc.finish();
    CHECK(text == sweep_document(axes, bad.empty() ? expected : kept, s, bad).dump(1) + "\n");
    // The same document built as a tree and dumped by nlohmann.
    json tree = {{"axes", axes}, {"kind", "sweep"}, {"schema_version", kResultSchemaVersion}};
    tree["results"] = json::array();
    for (const StepResult& r : bad.empty() ? expected : kept) tree["results"].push_back(to_json(r));
    for (const InvalidScenario& v : bad)
      tree["invalid"].push_back(
          {{"index", v.index}, {"scenario", scenario_to_json(s[v.index])}, {"error", v.message}});
    CHECK(text == tree.dump(1) + "\n");
  }
  // No results at all: the empty list, as sweep_document writes it.
  std::string empty;
  SweepDocumentStream none(
      axes, {}, [&](std::size_t i) { return s[i]; },
      [&](std::string_view piece) { empty += piece; });
  none.finish();
  CHECK(empty == sweep_document(axes, {}).dump(1) + "\n");
  const json bare = {{"axes", axes},
                     {"kind", "sweep"},
                     {"results", json::array()},
                     {"schema_version", kResultSchemaVersion}};
  CHECK(empty == bare.dump(1) + "\n");
  fs::remove_all(dir);
}

TEST_CASE("the document's text of each result is its dump(1) at the list's depth, with its line") {
  // Strings of the result and of the scenario that hold JSON's own characters and the line's keys.
  std::vector<Scenario> s = grid();
  s.resize(6);
  s[1].cluster = R"(x","scenario":{"y)";
  s[2].model = R"(},"scenario":{)";
  const ScenarioRunner runner = [](const Scenario& sc, SimContext& context) {
    StepResult r = testing::fake_runner(sc, context);
    r.warnings.push_back(R"(a "quoted" ,"scenario":{"b":1} and ,"result":{)");
    return r;
  };
  fs::path dir = temp_dir();
  RunOptions opt;
  opt.threads = 2;
  opt.partial_path = (dir / "text.json.partial").string();
  std::vector<std::uint64_t> offset(s.size(), 0);
  std::vector<std::string> text(s.size());
  opt.document = [&](std::size_t i, std::string_view t) { text[i] = t; };
  run_scenarios(
      s.size(), [&](std::size_t i) { return s[i]; }, all_indices(s.size()), runner, opt,
      [&](std::size_t i, StepResult&&, std::uint64_t at) { offset[i] = at; });
  std::ifstream in(opt.partial_path, std::ios::binary);
  SimContext context;
  for (std::size_t i = 0; i < s.size(); ++i) {
    CAPTURE(i);
    REQUIRE(offset[i] > 0u);
    const json expected = to_json(runner(s[i], context));
    CHECK(partial_result_at(in, offset[i]) == expected);
    std::string indented;
    append_indented_json(expected.dump(), kDocumentDepth, indented);
    CHECK(text[i] == indented);
  }
  // Resumed results have their text too.
  RunOptions resume = opt;
  resume.resume_from = {opt.partial_path};
  resume.partial_path = (dir / "resumed.json.partial").string();
  std::vector<std::string> again(s.size());
  resume.document = [&](std::size_t i, std::string_view t) { again[i] = t; };
  run_scenarios(
      s.size(), [&](std::size_t i) { return s[i]; }, all_indices(s.size()), runner, resume,
      [](std::size_t, StepResult&&, std::uint64_t) {});
  CHECK(again == text);
  fs::remove_all(dir);
}

TEST_CASE("resolve_threads") {
  CHECK(resolve_threads(5, 4) == 5);
  CHECK(resolve_threads(0, 1) >= 1);
  CHECK(resolve_threads(0, 1 << 20) == 1);
}
