// The small sweep the sweep CLI tests run: four scenarios on the analytic tier keep them fast; the
// machinery is tier-independent.
#pragma once
#include <string>

inline const std::string kSweep =
    "sweep --cluster dgx2-v100 --nodes 2 --model gpt-18b --tier analytic --tokens-per-gpu 1024 "
    "--nics-per-node 1,4 --strategy zero3,zeropp";
