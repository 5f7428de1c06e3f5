// Fuzzes FSDP config YAML (parse_yaml_text, then parse_fsdp_config).
#include "fuzz/fuzz_common.hpp"
#include "sim/core/yaml_io.hpp"
#include "sim/strategy/fsdp_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  zerosim::fuzz::expect_input_error_only([&] {
    const auto j = zerosim::parse_yaml_text(zerosim::fuzz::as_text(data, size), "fuzz-fsdp.yaml");
    const zerosim::FsdpConfig c = zerosim::parse_fsdp_config(j, "fuzz-fsdp.yaml");
    (void)c.settings.size();
  });
  return 0;
}
