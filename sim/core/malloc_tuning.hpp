// keep_freed_memory(): tells glibc's malloc to serve large blocks from the heap and to keep freed
// heap memory instead of returning it to the kernel. A sweep simulates thousands of scenarios that
// each allocate and free the same few hundred-KiB buffers (ops, timelines, breakdown points); by
// default each one was mmap'ed, page-faulted in and unmapped again: a third of a small analytic
// scenario's time went to the kernel (perf, BM_SweepScenarios). It also turns off fastbins, whose
// consolidation before every large request cost a tenth of a long sweep. Process-wide, so only
// programs (the CLI, the benchmarks) call it, once, before any work; the library never does.
#pragma once

namespace zerosim {

void keep_freed_memory();

}  // namespace zerosim
