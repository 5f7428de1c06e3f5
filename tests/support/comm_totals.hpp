// The inter-node bytes and the count of collectives of one key of a result's comm.by_phase or
// comm.by_collective (0 when the key is absent), for tests that check bytes against closed forms.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "sim/result/step_result.hpp"

inline double inter(const std::map<std::string, zerosim::CommTotals>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second.inter_node_bytes;
}
inline std::uint64_t ops(const std::map<std::string, zerosim::CommTotals>& m,
                         const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second.count;
}
