// A context's cache of simulate()'s inputs (parsed cost profiles and models,
// sim/core/file_cache.hpp) and its cheaper result assembly must not change a single byte of the
// result: every scenario is compared, as the whole result JSON, between a run whose inputs are
// parsed fresh (copies of the preset files under new paths, in a fresh context) and repeated runs
// from one warm context. A file rewritten in place must be parsed again (never a stale result).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/step/simulate.hpp"
#include "sim/workload/transformer.hpp"
#include "tests/support/files.hpp"

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

Scenario make(const std::string& cluster, int nodes, const std::string& strategy,
              NetworkTier tier) {
  Scenario s;
  s.cluster = cluster;
  s.nodes = nodes;
  s.strategy = strategy;
  s.tier = tier;
  if (cluster == "dgx2-v100") {
    s.nics_per_node = 4;
    s.nic_gbps = 100;
  } else {
    s.fabric = "fat-tree";
    s.oversubscription = 2;
  }
  return s;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> v;
  for (const NetworkTier tier : {NetworkTier::Analytic, NetworkTier::Flow}) {
    for (const char* strategy : {"zero3", "zeropp", "zero3+qwz", "zero3+hpz", "zero3+qgz"})
      for (int nodes : {1, 3}) {
        v.push_back(make("dgx2-v100", nodes, strategy, tier));
        v.push_back(make("dgx-h100", nodes, strategy, tier));
      }
    Scenario ga = make("dgx2-v100", 2, "zeropp", tier);
    ga.grad_accum = 2;
    v.push_back(ga);
    // The same scenario as one above without SM sharing: the memo must not return the shared run.
    Scenario unshared = make("dgx2-v100", 3, "zeropp", tier);
    unshared.sm_share = false;
    v.push_back(unshared);
  }
  Scenario chunks = make("dgx-h100", 2, "zeropp", NetworkTier::Analytic);
  chunks.qgz_chunks = 2;
  v.push_back(chunks);
  return v;
}

}  // namespace

TEST_CASE("memoized inputs give byte-identical results to freshly parsed ones") {
  const fs::path dir = fs::temp_directory_path() / "zerosim_test_simulate_memo";
  fs::create_directories(dir);
  const fs::path src(ZEROSIM_SOURCE_DIR);
  for (const char* gpu : {"dgx2-v100", "dgx-h100"})
    fs::copy_file(src / "calibrate/profiles" / (std::string(gpu) + ".json"),
                  dir / (std::string(gpu) + ".json"), fs::copy_options::overwrite_existing);
  fs::copy_file(src / "workloads/gpt-18b.json", dir / "gpt-18b.json",
                fs::copy_options::overwrite_existing);

  int n = 0;
  SimContext context;
  for (Scenario s : scenarios()) {
    CAPTURE(s.cluster);
    CAPTURE(s.nodes);
    CAPTURE(s.strategy);
    CAPTURE(s.tier);
    CAPTURE(s.grad_accum);
    // Cached: preset names, resolved to the shipped files, parsed once for all scenarios.
    s.profile = s.cluster;
    const json warm1 = to_json(simulate(s, context));
    const json warm2 = to_json(simulate(s, context));
    // Fresh: the same bytes under another path, in a fresh context.
    const fs::path prof = dir / (s.cluster + ".json");
    spit(prof, slurp(prof) + "\n");
    const fs::path model = dir / "gpt-18b.json";
    spit(model, slurp(model) + "\n");
    Scenario fresh = s;
    fresh.profile = prof.string();
    fresh.model = model.string();
    json cold = to_json(simulate(fresh));
    cold["scenario"]["model"] = warm1["scenario"]["model"];  // the model name may follow its path
    CHECK(warm1["step_time_s"] == cold["step_time_s"]);
    CHECK(warm1.dump() == cold.dump());
    CHECK(warm1.dump() == warm2.dump());
    ++n;
  }
  CHECK(n == 45);
  fs::remove_all(dir);
}

TEST_CASE("a profile rewritten in place is parsed again, never served stale") {
  const fs::path dir = fs::temp_directory_path() / "zerosim_test_simulate_memo_stale";
  fs::create_directories(dir);
  const fs::path prof = dir / "p.json";
  const std::string text = slurp(fs::path(ZEROSIM_SOURCE_DIR) / "calibrate/profiles/dgx-h100.json");
  spit(prof, text);
  Scenario s = make("dgx-h100", 2, "zeropp", NetworkTier::Analytic);
  s.profile = prof.string();
  SimContext context;
  const double before = simulate(s, context).step_time_s;
  // Halve the GPU's peak: compute time doubles, so the step must get slower.
  json j = json::parse(text);
  j["gpu"]["peak_tflops"] = j["gpu"]["peak_tflops"].get<double>() / 2;
  spit(prof, j.dump(2));
  const double after = simulate(s, context).step_time_s;
  CHECK(after > before);
  spit(prof, text);
  CHECK(simulate(s, context).step_time_s == before);
  fs::remove_all(dir);
}

TEST_CASE("params in the result equal total_param_count at the run's sequence length") {
  const ModelShape m = load_model("gpt-18b");
  for (int seq : {0, 1024}) {
    Scenario s = make("dgx-h100", 1, "zero3", NetworkTier::Analytic);
    s.model = "gpt-18b";
    s.seq_len = seq;
    const StepResult r = simulate(s);
    CAPTURE(seq);
    // The learned position table has one row per position of the run's sequence.
    CHECK(r.scenario.params == total_param_count(with_sequence_length(m, seq > 0 ? seq : m.seq)));
    CHECK(r.scenario.active_params == r.scenario.params);
  }
  CHECK(total_param_count(with_sequence_length(m, 1024)) ==
        total_param_count(m) + (1024 - 512) * m.hidden);
}
