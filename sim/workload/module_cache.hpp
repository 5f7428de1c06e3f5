// ModuleCache: build_modules and the parameter counts for one SimContext, by content (the model's
// shape, tokens and sequence length). A sweep lowers thousands of scenarios of a few models, and
// building the modules (names, tensors, GEMMs) dominated small ones. Each answer equals the plain
// function beside it in transformer.hpp. Used by one thread at a time, as its context is.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/workload/transformer.hpp"

namespace zerosim {

class ModuleCache {
 public:
  // build_modules(m, tokens, seq), immutable and shared.
  std::shared_ptr<const std::vector<Module>> modules(const ModelShape& m, std::int64_t tokens,
                                                     int seq);
  std::int64_t total_params(const ModelShape& m);   // total_param_count(m)
  std::int64_t active_params(const ModelShape& m);  // active_param_count(m)
  std::int64_t layer_params(const ModelShape& m);   // layer_param_count(m)

 private:
  using Key = std::tuple<ModelShape, std::int64_t, int>;
  std::map<Key, std::shared_ptr<const std::vector<Module>>> modules_;
  // (shape, total, per layer, active), oldest first: a sweep uses a few models.
  using Counts = std::tuple<ModelShape, std::int64_t, std::int64_t, std::int64_t>;
  std::vector<Counts> counts_;
  const Counts& counts(const ModelShape& m);
};

}  // namespace zerosim
