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

constexpr int kCostProfileVersion = 2;

// Achieved cost of one link class inside collectives: NCCL's per-hop latency of a ring step over
// this class for each protocol (hwLat[class][Ring][proto] in NCCL's tuning model; the other
// algorithms' hop latencies scale with these, nccl_model.hpp) and the bandwidth efficiency.
struct LinkClassCost {
  double hop_latency_s = 0;        // Simple protocol
  double ll_hop_latency_s = 0;     // LL protocol
  double ll128_hop_latency_s = 0;  // LL128 protocol
  double efficiency = 1.0;         // achieved bus bandwidth / line rate, in (0, 1]
  bool operator==(const LinkClassCost&) const = default;
};

enum class GpuArch { Volta, Ampere, Hopper };  // the rows of NCCL's per-architecture caps

// The host CPU's vendor: NCCL (>= 2.18) charges every step of a multi-node ring at least its
// per-vendor network post overhead (getNetOverhead: Intel 1 us, AMD 2 us, other 1 us; x3 for
// Simple), the proxy thread's cost of posting one network operation.
enum class HostCpu { Intel, Amd, Other };

// How NCCL runs collectives on this machine (nccl_model.hpp): the release whose tuning constants
// apply, the architecture row of its bandwidth caps, its channel count, the host-side cost of one
// collective call, NVLink SHARP, and the per-peer cost of grouped point-to-point operations.
struct NcclParams {
  std::string version = "2.18";  // "MAJOR.MINOR[.PATCH]"
  int version_code = 21800;      // MAJOR*10000 + MINOR*100 + PATCH
  GpuArch arch = GpuArch::Hopper;
  double channels = 16;  // NCCL's channels: the per-channel bandwidth caps multiply by it (a
                         // fitted value may be fractional: an average over the collectives)
  double launch_s = 0;   // per collective call on the GPUs' timeline: the kernel's start after
                         // the previous one, NCCL's setup, the proxy's wake-up
  // The host's time to launch one GPU's part of a collective call (NCCL's enqueue, the kernel
  // launch). A thread driving G GPUs issues G of them per call, so a loop of back-to-back calls,
  // as nccl-tests times them, takes at least G x this per call (nccl_tests_time). 0: not binding.
  double host_launch_s = 0;
  bool nvls = false;              // NVLink SHARP (Hopper NVSwitch systems, NCCL >= 2.18)
  double nvls_efficiency = 0.85;  // NVLS busbw / NVLink line rate per GPU per direction (the
                                  // time; NCCL's choice uses its own 0.85)
  // Time each NVLS worker (channel x head) spends per chunk beyond moving its bytes: the
  // cross-GPU synchronization of each chunk's reduce and broadcast. NCCL shrinks the chunk from
  // 128 KiB to 16 KiB for smaller buffers, so mid-size NVLS all-reduces pay more of it per byte
  // (nccl_model.cpp, nvls_chunk_time). The time, not the choice; 0: none.
  double nvls_chunk_s = 0;
  double p2p_peer_s = 0;      // per peer inside the node (NVLink / PCIe) of a grouped send/recv
  double p2p_net_peer_s = 0;  // per peer across the network of a grouped send/recv: the proxy
                              // thread posts and progresses each network peer's transfers
  HostCpu host_cpu = HostCpu::Intel;  // NCCL's network post overhead per ring step and LL's
                                      // busbw cap across nodes (llMaxBws' host rows)
  double p2p_efficiency = 1;          // grouped send/recv bandwidth / a ring's on the same links
  // The network transport's small-message path: a grouped send/recv whose message per peer is
  // below p2p_small_bytes costs p2p_small_net_peer_s more per network peer (0: no such path).
  double p2p_small_bytes = 0;
  double p2p_small_net_peer_s = 0;
  // LL128's achieved bandwidth / what NCCL's tuner assumes for it (its wire fraction and
  // per-channel cap): the time of an LL128 collective, not NCCL's choice of it (1: as assumed).
  double ll128_efficiency = 1;
  // LL's achieved bandwidth inside one node / what NCCL's tuner assumes for it (before NCCL 2.21
  // 1/4 of the link for all-reduce and 1/3 for all_gather / reduce_scatter, from 2.21 1/2; capped
  // by llMaxBw): LL's 16-byte lines carry 8 bytes of data, so a node's GPUs reach at most half the
  // link, twice the older tuner's all-reduce assumption. The time, not the choice (1: as
  // assumed). Across nodes LL runs at the rate NCCL assumes.
  double ll_intra_efficiency = 1;
  // The fabric's groups (Slingshot's dragonfly groups): nodes per group (0: one group however
  // many nodes) and the least time each step of a ring whose nodes span several groups takes
  // (0: none). A ring's steps run through a bounded number of buffer slots per connection, so in
  // steady state every step waits for the ring's slowest edge; an edge between groups crosses the
  // fabric's global links. NCCL's tuner does not see it (the time, not the choice).
  int group_nodes = 0;
  double group_step_s = 0;
  bool operator==(const NcclParams&) const = default;
};

struct KernelCost {
  double throughput_Bps = 0;  // bytes read + written per second
  double launch_s = 0;        // fixed overhead per launch
  double time(double bytes) const { return launch_s + bytes / throughput_Bps; }
  bool operator==(const KernelCost&) const = default;
};

// The compute model's parameters (sim/step/compute_model.hpp), each physical: documented with its
// range and evidence in the profile's provenance and docs/step-model.md.
struct ComputeParams {
  double sm_count = 0;   // streaming multiprocessors (datasheet): GEMM output tiles run one per SM
  double gemm_tile = 0;  // output tile edge of the large BF16/FP16 GEMM kernels (elements)
  double memory_bound_fraction = 0;      // achieved / HBM bandwidth of memory-bound kernels, (0, 1]
  double flash_forward_efficiency = 0;   // FlashAttention forward at long sequences / peak
  double flash_backward_efficiency = 0;  // FlashAttention backward at long sequences / peak
  double flash_seq_half = 0;     // sequence at which FlashAttention reaches half that efficiency
  double kernel_overhead_s = 0;  // per kernel of a pass: the gap between dependent kernels
  bool operator==(const ComputeParams&) const = default;
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
  double attention_efficiency = 0;  // achieved/peak for the eager attention score/context matmuls
  ComputeParams compute;

  // Kernels by name: "quantize_int8", "dequantize_int8", "quantize_int4", "dequantize_int4",
  // "swizzle_quantize_int4", "dequant_reduce_quant_int4", "dequant_reduce_int4", "copy".
  std::map<std::string, KernelCost> kernels;
  double optimizer_Bps = 0;  // bytes of optimizer state streamed per second by the Adam step
  double memory_reserved_bytes = 0;  // framework/CUDA context overhead not available to the model
  // Host time of one eager PyTorch op dispatched by the training process (Python call, dispatcher,
  // a view, a record_stream or a kernel launch): seconds per op. The same mechanism on every
  // machine; the value is the host CPU's.
  double host_op_s = 0;

  // Network
  std::map<LinkClass, LinkClassCost> link_classes;
  NcclParams nccl;

  double gemm_efficiency_at(double flops) const;
  const KernelCost& kernel(const std::string& name) const;  // throws std::out_of_range naming it
  double kernel_time(const std::string& name, double bytes) const {
    return kernel(name).time(bytes);
  }
  const LinkClassCost& link_class(LinkClass c) const;
  bool operator==(const CostProfile&) const = default;  // by value (cache keys)
};

// The kernel names every profile must define (sorted), and the JSON key of a link class ("nvlink",
// "pcie", "network") and of an architecture ("volta", "ampere", "hopper").
const std::vector<std::string>& cost_profile_kernel_names();
const char* link_class_key(LinkClass c);
const char* gpu_arch_key(GpuArch a);
const char* host_cpu_key(HostCpu c);
// "2.18" -> 21800, "2.7.8" -> 20708; -1 when not MAJOR.MINOR[.PATCH] with MINOR, PATCH < 100.
int nccl_version_code(const std::string& version);

// How far the profile's collective (link and NCCL) parameters can be trusted, from its
// provenance: "fitted on LOGS (FIGURE)" when provenance.collectives names the logs they were
// fitted on ("fitted_on") and how well they met logs ("validation"); "derived, checked against
// LOGS (FIGURE)" when a derived profile names logs it was compared with ("checked_against");
// "derived, unvalidated" otherwise.
std::string collectives_trust(const CostProfile& p);

// Strict parse (unknown keys, wrong types, non-positive rates -> InputError with file and JSON
// path).
CostProfile parse_cost_profile(const json& j, const std::string& file);
CostProfile load_cost_profile(const std::string& path);
json to_json(const CostProfile& p);
// --profile NAME|FILE, or "" to select the shipped profile whose gpu_model matches the topology.
CostProfile select_cost_profile(const std::string& name_or_file, const Topology& topo);
// Same, parsed once per distinct file content in `files` (the same object while the file is
// unchanged: no copy per scenario, and an identity that memos of derived results compare first);
// null `files`: read and parsed afresh.
// Among derived profiles of the GPU model, the one named `node_type` wins over the first listed.
std::shared_ptr<const CostProfile> shared_select_cost_profile(const std::string& name_or_file,
                                                              const std::string& gpu_model,
                                                              FileCache* files = nullptr,
                                                              const std::string& node_type = "");
// Same, by GPU model string (what select_cost_profile uses); paths of the shipped profiles, sorted.
CostProfile select_cost_profile_for_gpu(const std::string& name_or_file,
                                        const std::string& gpu_model);
std::vector<std::string> shipped_cost_profiles(FileCache* files = nullptr);

}  // namespace zerosim
