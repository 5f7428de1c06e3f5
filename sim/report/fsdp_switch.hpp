// Switching from PyTorch FSDP to ZeRO-3 or ZeRO++: for results that hold an FSDP run and a ZeRO-3
// / ZeRO++ run of the same scenario (cluster, nodes, network, model, batch, sequence,
// checkpointing, tier and profile: the strategy alone differs), one short paragraph per pair
// generated from the numbers: what the switch changes in step time (and tokens/s), cross-node bytes
// per step and peak memory per GPU, and whether the ZeRO run fits. `report` and `compare` append
// these paragraphs when such pairs exist.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

struct FsdpSwitch {
  const ResultView* fsdp = nullptr;  // a run of an FSDP strategy
  const ResultView* zero = nullptr;  // a ZeRO-3 / ZeRO++ run of the same scenario otherwise
};

// Every (FSDP, ZeRO-3 family) pair of the same scenario, in the order of `results`.
std::vector<FsdpSwitch> fsdp_switches(const std::vector<const ResultView*>& results);
// "Switching from FSDP FULL_SHARD to ZeRO++ (...): step time 1.20 s -> 0.95 s (-20.8%, tokens/s
// +26.3%); cross-node bytes per step ...; peak memory per GPU ... (fits in ...)."
std::string fsdp_switch_paragraph(const FsdpSwitch& s);
// A Markdown section ("## Switching from FSDP to ZeRO" and the paragraphs), or "" without pairs.
std::string render_fsdp_switch_markdown(const std::vector<const ResultView*>& results);
// The same as an HTML section, or "".
std::string render_fsdp_switch_html(const std::vector<const ResultView*>& results);

}  // namespace zerosim::report
