#include "sim/strategy/strategy.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "sim/core/error.hpp"

namespace zerosim {

std::string Strategy::name() const {
  if (stage == 1) return "zero1";
  if (stage == 2) return "zero2";
  if (hsdp) return "hsdp";
  if (qwz && hpz && qgz) return "zeropp";
  std::string n = "zero3";
  if (qwz) n += "+qwz";
  if (hpz) n += "+hpz";
  if (qgz) n += "+qgz";
  return n;
}

Strategy parse_strategy(const std::string& text, const std::string& flag) {
  Strategy s;
  if (text == "zeropp" || text == "zero++") {
    s.qwz = s.hpz = s.qgz = true;
    return s;
  }
  if (text == "zero1" || text == "zero2") {
    s.stage = text == "zero1" ? 1 : 2;
    return s;
  }
  if (text == "hsdp") {
    s.hsdp = true;
    return s;
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto plus = text.find('+', start);
    parts.push_back(text.substr(start, plus == std::string::npos ? plus : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  if (parts[0] != "zero3")
    throw flag_error(flag, fmt::format("strategy '{}' must start with zero3 (or be zeropp, zero1, "
                                       "zero2 or hsdp); e.g. zero3, zeropp, zero3+qwz+hpz",
                                       text));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    bool* bit = parts[i] == "qwz"   ? &s.qwz
                : parts[i] == "hpz" ? &s.hpz
                : parts[i] == "qgz" ? &s.qgz
                                    : nullptr;
    if (!bit)
      throw flag_error(flag,
                       fmt::format("unknown strategy component '{}' in '{}' (known: qwz, hpz, qgz)",
                                   parts[i], text));
    if (*bit)
      throw flag_error(flag,
                       fmt::format("strategy component '{}' given twice in '{}'", parts[i], text));
    *bit = true;
  }
  return s;
}

const char* to_string(OffloadDevice d) {
  switch (d) {
    case OffloadDevice::Cpu:
      return "cpu";
    case OffloadDevice::Nvme:
      return "nvme";
    case OffloadDevice::None:
      break;
  }
  return "none";
}

json to_json(const Strategy& s) {
  json j = json::object();
  j.emplace("name", s.name());
  if (s.hsdp) j.emplace("shard_size", s.shard_size);
  j.emplace("qwz", s.qwz);
  j.emplace("hpz", s.hpz);
  j.emplace("qgz", s.qgz);
  j.emplace("hpz_size", s.hpz_size);
  j.emplace("weight_bits", s.weight_bits);
  j.emplace("grad_bits", s.grad_bits);
  j.emplace("quant_block_elems", s.quant_block);
  j.emplace("qgz_chunks", s.qgz_chunks);
  j.emplace("overlap_comm", s.overlap_comm);
  j.emplace("reduce_bucket_elems", s.reduce_bucket_elems);
  j.emplace("prefetch_bucket_elems", s.prefetch_bucket_elems);
  j.emplace("max_live_params", s.max_live_params);
  j.emplace("max_reuse_distance", s.max_reuse_distance);
  j.emplace("grad_comm_bytes", s.grad_comm_bytes);
  j.emplace("dtype", s.dtype);
  j.emplace("source", s.source);
  // Only when offloading: results without it keep their bytes.
  if (s.offload_optimizer != OffloadDevice::None)
    j.emplace("offload_optimizer", to_string(s.offload_optimizer));
  if (s.offload_param != OffloadDevice::None)
    j.emplace("offload_param", to_string(s.offload_param));
  return j;
}

}  // namespace zerosim
