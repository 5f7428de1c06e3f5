#include "sim/core/malloc_tuning.hpp"

#include <malloc.h>

namespace zerosim {

void keep_freed_memory() {
  // Blocks below 64 MiB come from the heap; up to 256 MiB of free heap top stays mapped.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace zerosim
