#include "sim/step/micro_batch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/step/simulate.hpp"

namespace zerosim {

namespace {

// "8192 (--micro-batch 1)" or "4096 or 6144 (--micro-batch 2 or 3)": the whole numbers of
// sequences on either side of `tokens`.
std::string neighbours(std::int64_t tokens, int seq) {
  const std::int64_t below = tokens / seq, above = below + 1;
  if (below == 0) return fmt::format("{} (--micro-batch 1)", seq);
  return fmt::format("{} or {} (--micro-batch {} or {})", below * seq, above * seq, below, above);
}

}  // namespace

std::int64_t micro_batch_sequences(const Scenario& sc, int seq) {
  if (sc.micro_batch != 0 && sc.tokens_per_gpu != 0)
    throw flag_error(
        "--micro-batch",
        fmt::format("--micro-batch {} and --tokens-per-gpu {} both set the micro-batch: "
                    "give one (sequences or tokens per GPU)",
                    sc.micro_batch, sc.tokens_per_gpu));
  if (sc.micro_batch < 0)
    throw flag_error("--micro-batch", fmt::format("must be at least 1, not {}", sc.micro_batch));
  if (sc.tokens_per_gpu < 0)
    throw flag_error("--tokens-per-gpu",
                     fmt::format("must be at least 1, not {}", sc.tokens_per_gpu));
  if (sc.micro_batch > 0) return sc.micro_batch;
  if (sc.tokens_per_gpu > 0) {
    if (sc.tokens_per_gpu % seq != 0)
      throw flag_error(
          "--tokens-per-gpu",
          fmt::format("{} is not a whole number of {}-token sequences (a micro-batch holds whole "
                      "sequences); the nearest that are: {}",
                      sc.tokens_per_gpu, seq, neighbours(sc.tokens_per_gpu, seq)));
    return sc.tokens_per_gpu / seq;
  }
  return std::max(1, kDefaultTokensPerGpu / seq);
}

std::string micro_batch_source(const Scenario& sc) {
  if (sc.micro_batch > 0) return "--micro-batch";
  if (sc.tokens_per_gpu > 0) return "--tokens-per-gpu";
  return fmt::format("default: the whole sequences in {} tokens, at least one",
                     kDefaultTokensPerGpu);
}

}  // namespace zerosim
