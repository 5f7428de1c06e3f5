// The micro-batch: whole sequences per GPU per micro-step. It is given in sequences
// (--micro-batch N, N x seq tokens), in tokens (--tokens-per-gpu T, a whole number of sequences)
// or not at all (as many whole sequences as fit in kDefaultTokensPerGpu tokens, at least one). An
// explicit value runs as given or is refused with the nearest valid values: it is never changed.
#pragma once
#include <cstdint>
#include <string>

namespace zerosim {

struct Scenario;

// Tokens per GPU per micro-step when neither flag is given: the sequences that fit, at least one.
constexpr int kDefaultTokensPerGpu = 2048;

// Sequences per GPU per micro-step of `scenario` at sequence length `seq` (>= 1). InputError
// naming the flag, the value and the rule when both flags are given, a value is not positive, or
// --tokens-per-gpu is not a whole number of sequences (the message names the whole numbers of
// sequences on either side, in tokens and as --micro-batch).
std::int64_t micro_batch_sequences(const Scenario& scenario, int seq);

// Where the micro-batch came from: "--micro-batch", "--tokens-per-gpu" or the default's rule.
std::string micro_batch_source(const Scenario& scenario);

}  // namespace zerosim
