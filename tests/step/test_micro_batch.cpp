// The micro-batch rule (sim/step/micro_batch.hpp): an explicit value runs as given or is refused
// naming the flag, the value and the whole numbers of sequences on either side; the default is the
// whole sequences in 2048 tokens, at least one.
#include <doctest/doctest.h>

#include <string>

#include "sim/core/error.hpp"
#include "sim/step/micro_batch.hpp"
#include "sim/step/simulate.hpp"

using namespace zerosim;

namespace {

std::string refusal(const Scenario& s, int seq) {
  try {
    micro_batch_sequences(s, seq);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("default: the whole sequences in 2048 tokens, at least one") {
  const Scenario s;
  CHECK(micro_batch_sequences(s, 512) == 4);
  CHECK(micro_batch_sequences(s, 2048) == 1);
  CHECK(micro_batch_sequences(s, 1000) == 2);  // 2000 tokens: whole sequences only
  CHECK(micro_batch_sequences(s, 8192) == 1);  // one sequence, not a fraction of one
  CHECK(micro_batch_source(s).find("default") == 0);
}

TEST_CASE("--micro-batch counts sequences; --tokens-per-gpu whole sequences of tokens") {
  Scenario s;
  s.micro_batch = 3;
  CHECK(micro_batch_sequences(s, 8192) == 3);
  CHECK(micro_batch_source(s) == "--micro-batch");
  s.micro_batch = 0;
  s.tokens_per_gpu = 16384;
  CHECK(micro_batch_sequences(s, 8192) == 2);
  CHECK(micro_batch_source(s) == "--tokens-per-gpu");
}

TEST_CASE("an explicit --tokens-per-gpu is never raised: refused with its neighbours") {
  Scenario s;
  s.tokens_per_gpu = 2048;  // the default's value, given explicitly, on 8192-token sequences
  const std::string below = refusal(s, 8192);
  CHECK(below.find("--tokens-per-gpu") != std::string::npos);
  CHECK(below.find("2048 is not a whole number of 8192-token sequences") != std::string::npos);
  CHECK(below.find("8192 (--micro-batch 1)") != std::string::npos);
  s.tokens_per_gpu = 5000;
  CHECK(refusal(s, 2048).find("4096 or 6144 (--micro-batch 2 or 3)") != std::string::npos);
}

TEST_CASE("both flags, or a value below one, are refused") {
  Scenario s;
  s.micro_batch = 1;
  s.tokens_per_gpu = 2048;
  CHECK(refusal(s, 2048).find("give one") != std::string::npos);
  s.tokens_per_gpu = 0;
  s.micro_batch = -1;
  CHECK(refusal(s, 2048).find("--micro-batch") != std::string::npos);
}
