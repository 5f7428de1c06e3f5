// SimContext: what simulate() keeps from one call to the next, owned by the caller and passed
// explicitly: the reference modes (which fast paths run) and every cache on simulate()'s path,
// each keyed by content: the input files and what was parsed from them (FileCache), built clusters
// with their route tables (ClusterCache), modules and parameter counts (ModuleCache), the fabrics'
// analytic plans (FabricPlanCache), lowered steps with their group lists (LoweringCache) and the
// timings of steps already run (RunMemo). A context is used by one thread at a time; a sweep gives
// each worker thread its own, and two contexts share nothing. Results never depend on the context:
// a fresh one, a warm one and the reference modes give bit-identical results
// (tests/step/test_sim_context.cpp), except that lowering every micro-step instead of extending
// two agrees to rounding (tests/step/test_accumulation.cpp), and that a scenario no node count can
// fit is refused (InputError) where refuse_unfit_early off simulates it as not fitting.
#pragma once
#include "sim/core/file_cache.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/network_model.hpp"
#include "sim/step/lowering_cache.hpp"
#include "sim/step/run_memo.hpp"
#include "sim/topology/cluster_cache.hpp"
#include "sim/workload/module_cache.hpp"

namespace zerosim {

// The plain computations each fast path must equal, switched on for tests and benchmarks.
struct ReferenceModes {
  NetworkOptions network;           // flow symmetry and folding, analytic shortcuts
  bool lowering_reuse = true;       // re-time a cached lowered step instead of lowering afresh,
                                    // and reuse the timing of a step already run (RunMemo)
  bool file_watch = true;           // files known unchanged from the kernel's reports, not stat()
  bool extend_accumulation = true;  // G >= 3 micro-steps: run 1 and 2, extend (accumulation.hpp)
                                    // instead of lowering every micro-step
  bool refuse_unfit_early = true;   // refuse a scenario no node count can fit before its cluster
                                    // is built (simulate.hpp) instead of simulating it unfit
};

class SimContext {
 public:
  explicit SimContext(const ReferenceModes& modes = {})
      : modes_(modes), files_(modes.file_watch), lowering_(modules_, modes.lowering_reuse) {}
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

  const ReferenceModes& modes() const { return modes_; }
  FileCache& files() { return files_; }
  ClusterCache& clusters() { return clusters_; }
  ModuleCache& modules() { return modules_; }
  FabricPlanCache& plans() { return plans_; }
  LoweringCache& lowering() { return lowering_; }
  RunMemo& runs() { return runs_; }

 private:
  ReferenceModes modes_;
  FileCache files_;
  ClusterCache clusters_;
  ModuleCache modules_;
  FabricPlanCache plans_;
  LoweringCache lowering_;  // uses modules_
  RunMemo runs_;
};

}  // namespace zerosim
