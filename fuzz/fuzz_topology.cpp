// Fuzzes topology files (builder presets and explicit graphs): load_topology_file, then the summary
// and one route, so a file that parses also yields a usable graph.
#include "fuzz/fuzz_common.hpp"
#include "sim/topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path =
      zerosim::fuzz::write_temp(zerosim::fuzz::as_text(data, size), "topology");
  zerosim::fuzz::expect_input_error_only([&] {
    zerosim::Topology t = zerosim::load_topology_file(path);
    (void)t.summary();
    if (t.gpu_count() >= 2) (void)t.route(0, t.gpu_count() - 1);
  });
  return 0;
}
