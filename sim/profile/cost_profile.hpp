// CostProfile: the machine's cost parameters, one versioned JSON file per machine under
// calibrate/profiles/. Every number is either measured (by zerosim-calibrate + `zerosim calibrate
// fit`) or derived from datasheets / NCCL's published model; `provenance.status` says which.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/topology/topology.hpp"

namespace zerosim {

constexpr int kCostProfileVersion = 1;

// Achieved cost of one link class inside collectives.
struct LinkClassCost {
  double hop_latency_s =
      0;  // per-hop latency α of a collective step over this class (NCCL's per-hop)
  double efficiency = 1.0;  // achieved bus bandwidth / line rate, in (0, 1]
};

// A fitted collective curve: time(bytes) = alpha_s + bytes_factor*bytes / busbw_Bps (nccl-tests
// busbw). Piecewise: segment i applies from min_bytes[i]. Used by the analytic tier when present.
struct CollectiveCurve {
  struct Segment {
    std::uint64_t min_bytes = 0;
    double alpha_s = 0;
    double busbw_Bps = 0;
  };
  std::vector<Segment> segments;
  int ranks = 0;  // rank count the curve was measured/fitted at (0 = unspecified)
  // alpha + bytes_factor*bytes/busbw of the segment covering `bytes`; throws std::out_of_range if
  // empty.
  double time(double bytes_factor, double bytes) const;
};

struct KernelCost {
  double throughput_Bps = 0;  // bytes read + written per second
  double launch_s = 0;        // fixed overhead per launch
  double time(double bytes) const { return launch_s + bytes / throughput_Bps; }
};

struct CostProfile {
  int version = kCostProfileVersion;
  std::string name;       // "dgx2-v100"
  std::string gpu_model;  // matches Topology::gpu_model()
  std::string status;     // "derived" | "measured"
  json provenance;        // free-form: sources, dates, versions, command

  // GPU
  double peak_flops = 0;           // dense FP16/BF16 tensor-core peak, FLOP/s
  std::uint64_t memory_bytes = 0;  // HBM capacity
  double hbm_Bps = 0;              // HBM bandwidth

  // GEMM efficiency curve: achieved/peak as a function of the GEMM's FLOP count, piecewise linear
  // in log10(flops) between points sorted by flops; clamped at both ends.
  std::vector<std::pair<double, double>> gemm_efficiency;
  double attention_efficiency = 0;  // achieved/peak for the attention score/context matmuls

  // Kernels by name: "quantize_int8", "dequantize_int8", "quantize_int4", "dequantize_int4",
  // "swizzle_quantize_int4", "dequant_reduce_quant_int4", "dequant_reduce_int4", "copy".
  std::map<std::string, KernelCost> kernels;
  double optimizer_Bps = 0;  // bytes of optimizer state streamed per second by the Adam step
  double memory_reserved_bytes = 0;  // framework/CUDA context overhead not available to the model

  // Network
  std::map<LinkClass, LinkClassCost> link_classes;
  // Optional fitted curves for the analytic tier, keyed "<op>/<tier>" e.g. "all_gather/intra_node".
  std::map<std::string, CollectiveCurve> collectives;

  double gemm_efficiency_at(double flops) const;
  const KernelCost& kernel(const std::string& name) const;  // throws std::out_of_range naming it
  double kernel_time(const std::string& name, double bytes) const {
    return kernel(name).time(bytes);
  }
  const LinkClassCost& link_class(LinkClass c) const;
  // The fitted curve "<op>/<tier>", or nullptr when the profile has none.
  const CollectiveCurve* collective(const std::string& op, const std::string& tier) const;
};

// The kernel names every profile must define (sorted), the collective ops and tiers of curve keys,
// and the JSON key of a link class ("nvlink", "pcie", "network").
const std::vector<std::string>& cost_profile_kernel_names();
const std::vector<std::string>& collective_op_names();    // all_gather, all_reduce, all_to_all, ...
const std::vector<std::string>& collective_tier_names();  // inter_node, intra_node
const char* link_class_key(LinkClass c);

// Strict parse (unknown keys, wrong types, non-positive rates -> InputError with file and JSON
// path).
CostProfile parse_cost_profile(const json& j, const std::string& file);
CostProfile load_cost_profile(const std::string& path);
json to_json(const CostProfile& p);
// --profile NAME|FILE, or "" to select the shipped profile whose gpu_model matches the topology.
CostProfile select_cost_profile(const std::string& name_or_file, const Topology& topo);
// Same, shared: the memo's object, the same one while the profile's file is unchanged (no copy
// per scenario, and an identity that memos of derived results can key on).
std::shared_ptr<const CostProfile> shared_select_cost_profile(const std::string& name_or_file,
                                                              const std::string& gpu_model);
// Same, by GPU model string (what select_cost_profile uses); paths of the shipped profiles, sorted.
CostProfile select_cost_profile_for_gpu(const std::string& name_or_file,
                                        const std::string& gpu_model);
std::vector<std::string> shipped_cost_profiles();

}  // namespace zerosim
