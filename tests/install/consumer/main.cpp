// consumer CLUSTER NODES MODEL STRATEGY: simulate() through the installed headers and libraries,
// printing the result JSON as `zerosim simulate ... --json` does. Exit 2 on bad input.
#include <cstdio>
#include <cstdlib>

#include "sim/core/error.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/simulate.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: consumer CLUSTER NODES MODEL STRATEGY\n");
    return 2;
  }
  zerosim::Scenario s;
  s.cluster = argv[1];
  s.nodes = std::atoi(argv[2]);
  s.model = argv[3];
  s.strategy = argv[4];
  try {
    std::printf("%s\n", zerosim::to_json(zerosim::simulate(s)).dump(2).c_str());
  } catch (const zerosim::InputError& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
