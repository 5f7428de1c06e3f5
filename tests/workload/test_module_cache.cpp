// ModuleCache: the same immutable module list for the same (shape, tokens, seq), equal to a fresh
// build, and a different one when any of them differs; parameter counts equal the plain ones.
#include <doctest/doctest.h>

#include "sim/workload/model.hpp"
#include "sim/workload/module_cache.hpp"

using namespace zerosim;

TEST_CASE("cached modules equal a fresh build and follow every key part") {
  ModuleCache cache;
  const ModelShape m = load_model("gpt-18b");
  auto a = cache.modules(m, 2048, m.seq);
  CHECK(cache.modules(m, 2048, m.seq) == a);
  const auto fresh = build_modules(m, 2048, m.seq);
  REQUIRE(a->size() == fresh.size());
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    CHECK((*a)[i].name == fresh[i].name);
    CHECK((*a)[i].param_elems() == fresh[i].param_elems());
    CHECK((*a)[i].forward_flops() == fresh[i].forward_flops());
  }
  CHECK(cache.modules(m, 4096, m.seq) != a);
  // layer0.qkv: GEMM FLOPs linear in tokens.
  CHECK((*cache.modules(m, 4096, m.seq))[1].forward_flops() == 2 * (*a)[1].forward_flops());
  ModelShape wider = m;
  wider.hidden += 128;
  CHECK(cache.modules(wider, 2048, m.seq) != a);
  CHECK(total_param_count(wider) > total_param_count(m));
  for (const ModelShape& s : {m, wider, load_model("llama-3-8b"), m}) {
    CHECK(cache.total_params(s) == total_param_count(s));
    CHECK(cache.layer_params(s) == layer_param_count(s));
  }
  CHECK(ModuleCache().modules(m, 2048, m.seq) != a);  // caches share nothing
}
