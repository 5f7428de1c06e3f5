// Results of real sweeps for report tests: each expanded as `zerosim sweep` expands its flags
// (sweep::expand) and simulated on the analytic tier. One sweep per axis a report draws or tells
// apart: fabric x oversubscription, nodes, bit widths and hpZ group sizes, tokens per GPU.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace zerosim::testing {

// The results of the scenarios `axes` expand to, over llama-2-7b on dgx-h100 nodes.
inline std::vector<report::ResultView> real_sweep(std::vector<sweep::Axis> axes) {
  for (const sweep::Axis& base :
       {sweep::Axis{"--cluster", {"dgx-h100"}}, sweep::Axis{"--model", {"llama-2-7b"}},
        sweep::Axis{"--tier", {"analytic"}}})
    if (std::none_of(axes.begin(), axes.end(),
                     [&base](const sweep::Axis& a) { return a.flag == base.flag; }))
      axes.push_back(base);
  std::vector<report::ResultView> out;
  for (const Scenario& s : sweep::expand(Scenario{}, axes))
    out.push_back(report::view_of(simulate(s)));
  return out;
}

// 2 fabrics x 4 oversubscriptions x 2 NIC speeds x 2 strategies.
inline std::vector<report::ResultView> fabric_sweep() {
  return real_sweep({{"--nodes", {"8"}},
                     {"--fabric", {"rail", "fat-tree"}},
                     {"--oversubscription", {"1", "2", "4", "8"}},
                     {"--nic-gbps", {"100", "400"}},
                     {"--strategy", {"zero3", "zeropp"}}});
}

// 1 to 64 nodes, 2 strategies, one network.
inline std::vector<report::ResultView> nodes_sweep() {
  return real_sweep({{"--nodes", {"1", "2", "4", "8", "16", "32", "64"}},
                     {"--nic-gbps", {"100"}},
                     {"--strategy", {"zero3", "zeropp"}}});
}

// qwZ bit widths and hpZ group sizes of two strategies that use both, plus ZeRO-3, which uses
// neither: the sweep runs it once (13 scenarios, not 18).
inline std::vector<report::ResultView> bit_width_sweep() {
  return real_sweep({{"--nodes", {"4"}},
                     {"--nic-gbps", {"100"}},
                     {"--strategy", {"zero3", "zero3+qwz+hpz", "zeropp"}},
                     {"--qwz-bits", {"4", "8"}},
                     {"--hpz-size", {"2", "4", "8"}}});
}

// Tokens per GPU (1 to 4 sequences of llama-2-7b) at one network, 3 strategies.
inline std::vector<report::ResultView> tokens_sweep() {
  return real_sweep({{"--nodes", {"8"}},
                     {"--nic-gbps", {"100"}},
                     {"--tokens-per-gpu", {"4096", "8192", "12288", "16384"}},
                     {"--strategy", {"zero3", "zero3+hpz", "zeropp"}}});
}

}  // namespace zerosim::testing
