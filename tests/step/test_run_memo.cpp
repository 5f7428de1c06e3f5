// RunMemo (sim/step/run_memo.hpp): the run of two micro-steps goes on from the snapshot the kept
// run of one took at micro-step 0's end, and every result is the one of a context that runs each
// step from its start (ReferenceModes::lowering_reuse off), byte for byte, for G = 2 and for the
// steps extended from it (G = 4). DeepSpeed's stage 3 and FSDP on the analytic tier resume;
// stage 1 (whose micro-step 0 reduces only when it is the last) runs from the start, as does the
// flow tier (its network does not say it is idle).
#include <doctest/doctest.h>

#include <string>

#include "sim/result/step_result.hpp"
#include "sim/step/simulate.hpp"
#include "tests/step/gpt18b_setup.hpp"

using namespace zerosim;

TEST_CASE("a step of two micro-steps resumed from the kept run of one is the step run in full") {
  struct Case {
    const char* strategy;
    NetworkTier tier;
    bool resumes;
  };
  for (const Case c :
       {Case{"zero3", NetworkTier::Analytic, true}, Case{"zeropp", NetworkTier::Analytic, true},
        Case{"zero3+hpz", NetworkTier::Analytic, true}, Case{"zero1", NetworkTier::Analytic, false},
        Case{"fsdp", NetworkTier::Analytic, true}, Case{"fsdp2", NetworkTier::Analytic, true},
        Case{"zero3", NetworkTier::Flow, false}}) {
    CAPTURE(c.strategy);
    CAPTURE(c.tier);
    SimContext warm;
    (void)simulate(gpt18b_h100_scenario(c.strategy, c.tier, 1), warm);
    ReferenceModes plain;
    plain.lowering_reuse = false;
    for (const int G : {2, 4}) {
      CAPTURE(G);
      SimContext cold(plain);
      const Scenario sc = gpt18b_h100_scenario(c.strategy, c.tier, G);
      CHECK(to_json(simulate(sc, warm)).dump() == to_json(simulate(sc, cold)).dump());
    }
    CHECK((warm.runs().resumed() == 1) == c.resumes);
  }
}
