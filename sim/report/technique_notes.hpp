// Why a ZeRO++ technique does not help where it does not: for each single technique (qwZ, hpZ,
// qgZ) and ZeRO++ whose throughput is within kTieFraction of ZeRO-3's (or below it), in one
// experiment at one bandwidth, a sentence from the results' own numbers: how much communication
// ZeRO-3 leaves exposed (what any technique can remove), what the technique's target collective
// still exposes, the quantization kernels it adds, and for hpZ the DeepSpeed release's rule of
// which gathers read its intra-node copy.
#pragma once
#include <string>
#include <vector>

#include "sim/report/result_view.hpp"

namespace zerosim::report {

// One sentence per technique that does not help, in the rows' order; none without a fitting
// ZeRO-3 row.
std::vector<std::string> technique_notes(const std::vector<const ResultView*>& same_bandwidth);

}  // namespace zerosim::report
