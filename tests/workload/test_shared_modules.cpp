// shared_modules: the memo of build_modules returns the same immutable list for the same (shape,
// tokens, seq), equal to a fresh build, and a different one when any of them differs.
#include <doctest/doctest.h>

#include "sim/workload/transformer.hpp"

using namespace zerosim;

TEST_CASE("memoized modules equal a fresh build and follow every key part") {
  const ModelShape m = load_model("gpt-18b");
  auto a = shared_modules(m, 2048, m.seq);
  CHECK(shared_modules(m, 2048, m.seq) == a);
  const auto fresh = build_modules(m, 2048, m.seq);
  REQUIRE(a->size() == fresh.size());
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    CHECK((*a)[i].name == fresh[i].name);
    CHECK((*a)[i].param_elems() == fresh[i].param_elems());
    CHECK((*a)[i].forward_flops() == fresh[i].forward_flops());
  }
  CHECK(shared_modules(m, 4096, m.seq) != a);
  // layer0.qkv: GEMM FLOPs linear in tokens.
  CHECK((*shared_modules(m, 4096, m.seq))[1].forward_flops() == 2 * (*a)[1].forward_flops());
  ModelShape wider = m;
  wider.hidden += 128;
  CHECK(shared_modules(wider, 2048, m.seq) != a);
  CHECK(total_param_count(wider) > total_param_count(m));
}
