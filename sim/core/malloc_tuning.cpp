#include "sim/core/malloc_tuning.hpp"

#include <malloc.h>

namespace zerosim {

void keep_freed_memory() {
  // Blocks below 64 MiB come from the heap; up to 256 MiB of free heap top stays mapped.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // No fastbins: a scenario allocates a few large buffers (ops, timelines, spans) while the small
  // blocks of earlier results are still live, and each large request with fastbin chunks around
  // consolidated them all again (malloc_consolidate was a tenth of a 3600-scenario CLI sweep).
  mallopt(M_MXFAST, 0);
}

}  // namespace zerosim
