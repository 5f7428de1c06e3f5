// CostProfile parsing, serialization, lookups and selection. The JSON layout (units in key names):
// {
//   "version": 1, "name": "dgx-h100", "gpu_model": "H100-SXM5-80GB",
//   "provenance": {"status": "derived"|"measured", ...free-form: sources, dates, command...},
//   "gpu": {"peak_tflops": 989.4, "memory_bytes": 85899345920, "hbm_GBps": 3350},
//   "gemm_efficiency": [{"flops": 1e8, "efficiency": 0.05}, ...],   // strictly increasing flops
//   "attention_efficiency": 0.4,
//   "compute": {"sm_count": 132, "gemm_tile": 128, "memory_bound_fraction": 0.8,
//               "flash_forward_efficiency": 0.6, "flash_backward_efficiency": 0.5,
//               "flash_seq_half": 400, "kernel_overhead_us": 2},
//   "kernels": {"quantize_int8": {"throughput_GBps": 2500, "launch_us": 5}, ...},
//   "optimizer_GBps": 2000, "memory_reserved_bytes": 2147483648, "host_op_us": 5,
//   "link_classes": {"nvlink": {"hop_latency_us": 3.4, "ll_hop_latency_us": 0.6,
//                    "ll128_hop_latency_us": 1.9, "efficiency": 0.82}, "pcie": {...},
//                    "network": {...}},
//   "nccl": {"version": "2.18", "arch": "hopper", "channels": 16, "launch_us": 5, "nvls": true,
//            "nvls_efficiency": 0.85, "p2p_peer_us": 0.5, "p2p_net_peer_us": 1,
//            "p2p_efficiency": 0.9, "host_cpu": "intel"}
// }
#include "sim/profile/cost_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_cache.hpp"

namespace zerosim {

namespace {

namespace fs = std::filesystem;

// Keys in the profile's JSON for the link classes (independent of to_string(LinkClass) wording).
constexpr std::pair<LinkClass, const char*> kLinkClassKeys[] = {
    {LinkClass::NvLink, "nvlink"}, {LinkClass::Pcie, "pcie"}, {LinkClass::Network, "network"}};

// Unit conversions (s -> us, B/s -> GB/s) leave binary noise such as 3.3999999999999995; 12
// significant digits keep the written file readable and make parse(to_json(p)) a fixed point.
double clean(double x) { return std::stod(fmt::format("{:.12g}", x)); }

bool valid_efficiency(double e) { return e > 0 && e <= 1.0; }

double get_efficiency(const JsonReader& r) {
  double e = r.get_number();
  if (!valid_efficiency(e)) r.fail(fmt::format("must be in (0, 1] (got {})", e));
  return e;
}

// An optional achieved / NCCL-assumed bandwidth ratio under `key`: left unchanged (1) when absent,
// else in (0, 2].
void optional_ratio(const JsonReader& r, const char* key, const char* meaning, double& out) {
  if (!r.has(key)) return;
  out = r.at(key).get_positive();
  if (out > 2) r.at(key).fail(fmt::format("must be in (0, 2], {} (got {})", meaning, out));
}

std::uint64_t get_bytes(const JsonReader& r, std::int64_t min) {
  return static_cast<std::uint64_t>(r.get_int_at_least(min));
}

KernelCost parse_kernel(const JsonReader& r) {
  r.require_object({"throughput_GBps", "launch_us"});
  KernelCost k;
  k.throughput_Bps = r.at("throughput_GBps").get_positive() * 1e9;
  k.launch_s = r.at("launch_us").get_nonnegative() * 1e-6;
  return k;
}

// A positive count of at most `max` (SMs, tile edge, sequence): a larger one is a typo.
double get_count(const JsonReader& r, double max) {
  const double v = r.get_positive();
  if (v > max) r.fail(fmt::format("must be in (0, {}] (got {})", max, v));
  return v;
}

ComputeParams parse_compute(const JsonReader& r) {
  r.require_object({"sm_count", "gemm_tile", "memory_bound_fraction", "flash_forward_efficiency",
                    "flash_backward_efficiency", "flash_seq_half", "kernel_overhead_us"});
  ComputeParams c;
  c.sm_count = std::floor(get_count(r.at("sm_count"), 4096));
  if (c.sm_count < 1) r.at("sm_count").fail("must be at least 1");
  c.gemm_tile = get_count(r.at("gemm_tile"), 1024);
  c.memory_bound_fraction = get_efficiency(r.at("memory_bound_fraction"));
  c.flash_forward_efficiency = get_efficiency(r.at("flash_forward_efficiency"));
  c.flash_backward_efficiency = get_efficiency(r.at("flash_backward_efficiency"));
  c.flash_seq_half = r.at("flash_seq_half").get_nonnegative();
  if (c.flash_seq_half > 1e6) r.at("flash_seq_half").fail("must be at most 1e6");
  c.kernel_overhead_s = r.at("kernel_overhead_us").get_nonnegative() * 1e-6;
  if (c.kernel_overhead_s > 1e-3) r.at("kernel_overhead_us").fail("must be at most 1000");
  return c;
}

// The host CPU NCCL reads for its network post overhead and the fabric's groups.
void parse_nccl_fabric(const JsonReader& r, NcclParams& n) {
  const std::string cpu = r.at("host_cpu").get_string();
  bool cpu_known = false;
  for (HostCpu c : {HostCpu::Intel, HostCpu::Amd, HostCpu::Other})
    if (cpu == host_cpu_key(c)) {
      n.host_cpu = c;
      cpu_known = true;
    }
  if (!cpu_known)
    r.at("host_cpu")
        .fail(fmt::format("must be intel, amd or other (the host CPU vendor NCCL reads), got '{}'",
                          cpu));
  // Optional: the fabric's groups and the ring step a ring across them costs at least.
  if (r.has("group_nodes"))
    n.group_nodes = static_cast<int>(r.at("group_nodes").get_int_at_least(0));
  if (r.has("group_step_us")) {
    n.group_step_s = r.at("group_step_us").get_nonnegative() * 1e-6;
    if (n.group_step_s > 0 && n.group_nodes == 0)
      r.at("group_step_us")
          .fail(
              "is the least ring step across the fabric's groups, but group_nodes is 0 (one "
              "group)");
  }
  // The GPU-to-NIC path type is the cluster's (a topology input), never the profile's.
  if (r.has("nic_path"))
    r.at("nic_path")
        .fail(
            "is a property of the cluster, not of the cost profile: set \"nic_path\" (and "
            "\"pxn\") in the topology's builder or explicit graph (topologies/*.json)");
}

NcclParams parse_nccl(const JsonReader& r) {
  r.require_object({"version", "arch", "channels", "launch_us", "nvls", "nvls_efficiency",
                    "p2p_peer_us", "p2p_net_peer_us", "p2p_efficiency", "host_cpu",
                    "p2p_small_bytes", "p2p_small_net_peer_us", "ll128_efficiency",
                    "ll_intra_efficiency", "nvls_chunk_us", "host_launch_us", "nic_path",
                    "group_nodes", "group_step_us"});
  NcclParams n;
  n.version = r.at("version").get_string();
  n.version_code = nccl_version_code(n.version);
  if (n.version_code < 0)
    r.at("version").fail(
        fmt::format("must be an NCCL release 'MAJOR.MINOR[.PATCH]', got '{}'", n.version));
  if (n.version_code < 20700 || n.version_code >= 30000)
    r.at("version").fail(fmt::format(
        "NCCL {} is outside the releases whose tuning constants are modelled (2.7 to 2.x)",
        n.version));
  const std::string arch = r.at("arch").get_string();
  bool known = false;
  for (GpuArch a : {GpuArch::Volta, GpuArch::Ampere, GpuArch::Hopper})
    if (arch == gpu_arch_key(a)) {
      n.arch = a;
      known = true;
    }
  if (!known) r.at("arch").fail(fmt::format("must be volta, ampere or hopper, got '{}'", arch));
  n.channels = r.at("channels").get_number();
  if (!(n.channels >= 1 && n.channels <= 64))
    r.at("channels")
        .fail(fmt::format("must be in [1, 64], NCCL's channel range (got {})", n.channels));
  n.launch_s = r.at("launch_us").get_nonnegative() * 1e-6;
  // Optional: the host's launch time per GPU, binding only in a back-to-back loop (0 when absent).
  if (r.has("host_launch_us")) n.host_launch_s = r.at("host_launch_us").get_nonnegative() * 1e-6;
  n.nvls = r.at("nvls").get_bool();
  if (n.nvls && (n.arch != GpuArch::Hopper || n.version_code < 21800))
    r.at("nvls").fail("NVLink SHARP needs arch hopper and NCCL 2.18 or later");
  n.nvls_efficiency = get_efficiency(r.at("nvls_efficiency"));
  // Optional: NVLS's per-chunk synchronization time (0 = none; profiles without NVLS have none).
  if (r.has("nvls_chunk_us")) {
    n.nvls_chunk_s = r.at("nvls_chunk_us").get_nonnegative() * 1e-6;
    if (n.nvls_chunk_s > 0 && !n.nvls)
      r.at("nvls_chunk_us")
          .fail("is NVLS's per-chunk time, but this profile has no NVLS (nvls: false)");
  }
  n.p2p_peer_s = r.at("p2p_peer_us").get_nonnegative() * 1e-6;
  n.p2p_net_peer_s = r.at("p2p_net_peer_us").get_nonnegative() * 1e-6;
  n.p2p_efficiency = get_efficiency(r.at("p2p_efficiency"));
  // Optional: most transports have no small-message path of their own (0 = none).
  if (r.has("p2p_small_bytes")) n.p2p_small_bytes = r.at("p2p_small_bytes").get_nonnegative();
  if (r.has("p2p_small_net_peer_us"))
    n.p2p_small_net_peer_s = r.at("p2p_small_net_peer_us").get_nonnegative() * 1e-6;
  // Optional ratios of achieved to NCCL-assumed bandwidth: 1 unless measured otherwise.
  optional_ratio(r, "ll128_efficiency", "LL128's bandwidth / NCCL's assumption",
                 n.ll128_efficiency);
  optional_ratio(r, "ll_intra_efficiency",
                 "LL's bandwidth inside a node / NCCL's assumption (LL's lines carry half data: at "
                 "most twice the tuner's 1/4)",
                 n.ll_intra_efficiency);
  parse_nccl_fabric(r, n);
  return n;
}

}  // namespace

const std::vector<std::string>& cost_profile_kernel_names() {
  static const std::vector<std::string> names = {"copy",
                                                 "dequant_reduce_int4",
                                                 "dequant_reduce_quant_int4",
                                                 "dequantize_int4",
                                                 "dequantize_int8",
                                                 "quantize_int4",
                                                 "quantize_int8",
                                                 "swizzle_quantize_int4"};
  return names;
}

const char* link_class_key(LinkClass c) {
  for (const auto& [cls, key] : kLinkClassKeys)
    if (cls == c) return key;
  return "?";
}

const char* host_cpu_key(HostCpu c) {
  switch (c) {
    case HostCpu::Intel:
      return "intel";
    case HostCpu::Amd:
      return "amd";
    case HostCpu::Other:
      return "other";
  }
  return "?";
}

std::string collectives_trust(const CostProfile& p) {
  const json* c = p.provenance.is_object() && p.provenance.contains("collectives")
                      ? &p.provenance.at("collectives")
                      : nullptr;
  auto list = [&](const char* key) {
    std::string out;
    if (!c || !c->contains(key) || !c->at(key).is_array()) return out;
    for (const json& f : c->at(key))
      if (f.is_string()) out += (out.empty() ? "" : ", ") + f.get<std::string>();
    return out;
  };
  const std::string figure = c && c->contains("validation") && c->at("validation").is_string()
                                 ? " (" + c->at("validation").get<std::string>() + ")"
                                 : "";
  if (const std::string logs = list("fitted_on"); !logs.empty())
    return "fitted on " + logs + figure;
  if (const std::string logs = list("checked_against"); !logs.empty())
    return "derived, checked against " + logs + figure;
  return "derived, unvalidated";
}

const char* gpu_arch_key(GpuArch a) {
  switch (a) {
    case GpuArch::Volta:
      return "volta";
    case GpuArch::Ampere:
      return "ampere";
    case GpuArch::Hopper:
      return "hopper";
  }
  return "?";
}

int nccl_version_code(const std::string& version) {
  // Two or three dot-separated decimal parts, minor and patch below 100.
  int part[3] = {0, 0, 0};
  int count = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t j = i;
    while (j < version.size() && version[j] >= '0' && version[j] <= '9') ++j;
    if (j == i || j - i > 3 || count == 3) return -1;
    part[count++] = std::stoi(version.substr(i, j - i));
    if (j == version.size()) break;
    if (version[j] != '.') return -1;
    i = j + 1;
  }
  if (count < 2 || part[1] >= 100 || part[2] >= 100) return -1;
  return part[0] * 10000 + part[1] * 100 + part[2];
}

double CostProfile::gemm_efficiency_at(double flops) const {
  if (gemm_efficiency.empty())
    throw std::out_of_range("cost profile '" + name + "' has no GEMM efficiency curve");
  if (flops <= gemm_efficiency.front().first) return gemm_efficiency.front().second;
  if (flops >= gemm_efficiency.back().first) return gemm_efficiency.back().second;
  auto hi = std::upper_bound(gemm_efficiency.begin(), gemm_efficiency.end(), flops,
                             [](double f, const auto& pt) { return f < pt.first; });
  auto lo = hi - 1;
  double x0 = std::log10(lo->first), x1 = std::log10(hi->first), x = std::log10(flops);
  double t = (x - x0) / (x1 - x0);
  return lo->second + t * (hi->second - lo->second);
}

const KernelCost& CostProfile::kernel(const std::string& kname) const {
  auto it = kernels.find(kname);
  if (it == kernels.end())
    throw std::out_of_range("cost profile '" + name + "' has no kernel '" + kname + "'");
  return it->second;
}

const LinkClassCost& CostProfile::link_class(LinkClass c) const {
  auto it = link_classes.find(c);
  if (it == link_classes.end())
    throw std::out_of_range("cost profile '" + name + "' has no link class '" + link_class_key(c) +
                            "'");
  return it->second;
}

namespace {

// gemm_efficiency: (flops, efficiency) points sorted by strictly increasing flops.
auto parse_gemm_curve(const JsonReader& curve) -> decltype(CostProfile::gemm_efficiency) {
  decltype(CostProfile::gemm_efficiency) out;
  const std::size_t n = curve.array_size();
  if (n == 0) curve.fail("must have at least one point");
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader pt = curve.at(i);
    pt.require_object({"flops", "efficiency"});
    const double f = pt.at("flops").get_positive();
    if (i > 0 && f <= out.back().first)
      pt.at("flops").fail("points must be sorted by strictly increasing flops");
    out.emplace_back(f, get_efficiency(pt.at("efficiency")));
  }
  return out;
}

// kernels: every known kernel, nothing else.
auto parse_kernels(const JsonReader& kernels) -> decltype(CostProfile::kernels) {
  decltype(CostProfile::kernels) out;
  if (!kernels.value().is_object()) kernels.fail("must be an object");
  const auto& known = cost_profile_kernel_names();
  for (const auto& [kname, _] : kernels.value().items()) {
    if (std::find(known.begin(), known.end(), kname) == known.end())
      kernels.at(kname).fail(
          fmt::format("unknown kernel '{}' (known: {})", kname, fmt::join(known, ", ")));
    out[kname] = parse_kernel(kernels.at(kname));
  }
  for (const auto& kname : known)
    if (!out.count(kname)) kernels.fail(fmt::format("missing required kernel '{}'", kname));
  return out;
}

// link_classes: latencies and efficiency of NVLink, PCIe and the network.
auto parse_link_classes(const JsonReader& links) -> decltype(CostProfile::link_classes) {
  decltype(CostProfile::link_classes) out;
  links.require_object({"nvlink", "pcie", "network"});
  for (const auto& [cls, key] : kLinkClassKeys) {
    JsonReader l = links.at(key);
    l.require_object({"hop_latency_us", "ll_hop_latency_us", "ll128_hop_latency_us", "efficiency"});
    LinkClassCost c;
    c.hop_latency_s = l.at("hop_latency_us").get_nonnegative() * 1e-6;
    c.ll_hop_latency_s = l.at("ll_hop_latency_us").get_nonnegative() * 1e-6;
    c.ll128_hop_latency_s = l.at("ll128_hop_latency_us").get_nonnegative() * 1e-6;
    c.efficiency = get_efficiency(l.at("efficiency"));
    out[cls] = c;
  }
  return out;
}

}  // namespace

CostProfile parse_cost_profile(const json& j, const std::string& file) {
  JsonReader r(j, file);
  for (const char* old : {"zero3_fetch_ns_per_param", "zero3_fetch_ns_per_byte"})
    if (r.has(old))
      r.at(old).fail(
          "removed: ZeRO stage 3's fetch cost is DeepSpeed's re-assembly of each gathered "
          "parameter (host_op_us per dispatched PyTorch op, and a copy at the 'copy' kernel's "
          "rate); delete this key and give host_op_us");
  r.require_object({"version", "name", "gpu_model", "provenance", "gpu", "gemm_efficiency",
                    "attention_efficiency", "compute", "kernels", "optimizer_GBps",
                    "memory_reserved_bytes", "host_op_us", "link_classes", "nccl"});
  CostProfile p;
  p.version = r.at("version").get_int32_at_least(std::numeric_limits<int>::min());
  if (p.version != kCostProfileVersion)
    r.at("version").fail(fmt::format("unsupported version {} (this build reads version {})",
                                     p.version, kCostProfileVersion));
  p.name = r.at("name").get_string();
  if (p.name.empty()) r.at("name").fail("must not be empty");
  p.gpu_model = r.at("gpu_model").get_string();
  if (p.gpu_model.empty()) r.at("gpu_model").fail("must not be empty");

  JsonReader prov = r.at("provenance");
  if (!prov.value().is_object()) prov.fail("must be an object");
  p.status = prov.at("status").get_string();
  if (p.status != "derived" && p.status != "measured")
    prov.at("status").fail("must be \"derived\" or \"measured\"");
  p.provenance = prov.value();

  JsonReader gpu = r.at("gpu");
  gpu.require_object({"peak_tflops", "memory_bytes", "hbm_GBps"});
  p.peak_flops = gpu.at("peak_tflops").get_positive() * 1e12;
  p.memory_bytes = get_bytes(gpu.at("memory_bytes"), 1);
  p.hbm_Bps = gpu.at("hbm_GBps").get_positive() * 1e9;

  p.gemm_efficiency = parse_gemm_curve(r.at("gemm_efficiency"));
  p.attention_efficiency = get_efficiency(r.at("attention_efficiency"));
  p.compute = parse_compute(r.at("compute"));

  p.kernels = parse_kernels(r.at("kernels"));

  p.optimizer_Bps = r.at("optimizer_GBps").get_positive() * 1e9;
  p.memory_reserved_bytes = r.at("memory_reserved_bytes").get_nonnegative();
  if (p.memory_reserved_bytes >= static_cast<double>(p.memory_bytes))
    r.at("memory_reserved_bytes").fail("must be less than gpu/memory_bytes");
  p.host_op_s = r.at("host_op_us").get_nonnegative() * 1e-6;

  p.link_classes = parse_link_classes(r.at("link_classes"));

  p.nccl = parse_nccl(r.at("nccl"));
  return p;
}

namespace {

// Every scenario of a sweep loads the same profile(s): with a cache, each distinct file content is
// parsed once, and only the profile that is used is copied.
std::shared_ptr<const CostProfile> shared_cost_profile(const std::string& path, FileCache* files) {
  if (files)
    if (auto p = files->parsed<CostProfile>(path, [&](const std::string& text) {
          return parse_cost_profile(parse_json_text(text, path), path);
        }))
      return p;
  return std::make_shared<const CostProfile>(parse_cost_profile(load_json_file(path), path));
}

}  // namespace

CostProfile load_cost_profile(const std::string& path) {
  return *shared_cost_profile(path, nullptr);
}

json to_json(const CostProfile& p) {
  json j;
  j["version"] = p.version;
  j["name"] = p.name;
  j["gpu_model"] = p.gpu_model;
  json prov = p.provenance.is_object() ? p.provenance : json::object();
  prov["status"] = p.status;
  j["provenance"] = prov;
  j["gpu"] = {{"peak_tflops", clean(p.peak_flops / 1e12)},
              {"memory_bytes", p.memory_bytes},
              {"hbm_GBps", clean(p.hbm_Bps / 1e9)}};
  json curve = json::array();
  for (const auto& [f, e] : p.gemm_efficiency) curve.push_back({{"flops", f}, {"efficiency", e}});
  j["gemm_efficiency"] = curve;
  j["attention_efficiency"] = p.attention_efficiency;
  const ComputeParams& c = p.compute;
  j["compute"] = {{"sm_count", clean(c.sm_count)},
                  {"gemm_tile", clean(c.gemm_tile)},
                  {"memory_bound_fraction", clean(c.memory_bound_fraction)},
                  {"flash_forward_efficiency", clean(c.flash_forward_efficiency)},
                  {"flash_backward_efficiency", clean(c.flash_backward_efficiency)},
                  {"flash_seq_half", clean(c.flash_seq_half)},
                  {"kernel_overhead_us", clean(c.kernel_overhead_s * 1e6)}};
  json kernels = json::object();
  for (const auto& [kname, k] : p.kernels)
    kernels[kname] = {{"throughput_GBps", clean(k.throughput_Bps / 1e9)},
                      {"launch_us", clean(k.launch_s * 1e6)}};
  j["kernels"] = kernels;
  j["optimizer_GBps"] = clean(p.optimizer_Bps / 1e9);
  j["memory_reserved_bytes"] = p.memory_reserved_bytes;
  j["host_op_us"] = clean(p.host_op_s * 1e6);
  json links = json::object();
  for (const auto& [cls, c] : p.link_classes)
    links[link_class_key(cls)] = {{"hop_latency_us", clean(c.hop_latency_s * 1e6)},
                                  {"ll_hop_latency_us", clean(c.ll_hop_latency_s * 1e6)},
                                  {"ll128_hop_latency_us", clean(c.ll128_hop_latency_s * 1e6)},
                                  {"efficiency", clean(c.efficiency)}};
  j["link_classes"] = links;
  j["nccl"] = {{"version", p.nccl.version},
               {"arch", gpu_arch_key(p.nccl.arch)},
               {"channels", clean(p.nccl.channels)},
               {"launch_us", clean(p.nccl.launch_s * 1e6)},
               {"nvls", p.nccl.nvls},
               {"nvls_efficiency", clean(p.nccl.nvls_efficiency)},
               {"p2p_peer_us", clean(p.nccl.p2p_peer_s * 1e6)},
               {"p2p_net_peer_us", clean(p.nccl.p2p_net_peer_s * 1e6)},
               {"p2p_efficiency", clean(p.nccl.p2p_efficiency)},
               {"host_cpu", host_cpu_key(p.nccl.host_cpu)}};
  if (p.nccl.group_nodes > 0) {
    j["nccl"]["group_nodes"] = p.nccl.group_nodes;
    j["nccl"]["group_step_us"] = clean(p.nccl.group_step_s * 1e6);
  }
  if (p.nccl.host_launch_s > 0) j["nccl"]["host_launch_us"] = clean(p.nccl.host_launch_s * 1e6);
  if (p.nccl.nvls_chunk_s > 0) j["nccl"]["nvls_chunk_us"] = clean(p.nccl.nvls_chunk_s * 1e6);
  if (p.nccl.ll128_efficiency != 1) j["nccl"]["ll128_efficiency"] = clean(p.nccl.ll128_efficiency);
  if (p.nccl.ll_intra_efficiency != 1)
    j["nccl"]["ll_intra_efficiency"] = clean(p.nccl.ll_intra_efficiency);
  if (p.nccl.p2p_small_bytes > 0) {
    j["nccl"]["p2p_small_bytes"] = clean(p.nccl.p2p_small_bytes);
    j["nccl"]["p2p_small_net_peer_us"] = clean(p.nccl.p2p_small_net_peer_s * 1e6);
  }
  return j;
}

namespace {

// Listed on every call (a profile added meanwhile is seen); a cache lists the directory again only
// when it has changed.
std::shared_ptr<const std::vector<std::string>> shipped_list(FileCache* files) {
  static const std::string dir = (fs::path(data_dir()) / "calibrate" / "profiles").string();
  if (files) return files->json_files_in(dir);
  FileCache once(false);
  return once.json_files_in(dir);
}

}  // namespace

std::vector<std::string> shipped_cost_profiles(FileCache* files) { return *shipped_list(files); }

CostProfile select_cost_profile_for_gpu(const std::string& name_or_file,
                                        const std::string& gpu_model) {
  return *shared_select_cost_profile(name_or_file, gpu_model);
}

std::shared_ptr<const CostProfile> shared_select_cost_profile(const std::string& name_or_file,
                                                              const std::string& gpu_model,
                                                              FileCache* files,
                                                              const std::string& node_type) {
  if (!name_or_file.empty())
    return shared_cost_profile(
        resolve_data_file("calibrate/profiles", name_or_file, "--profile", files), files);
  // Of the profiles of the GPU model, one named for the cluster's node type (its name, or its name
  // and a suffix: "polaris-a100-measured") wins over one that is not (the DGX A100 40GB and
  // Polaris share a GPU but not a network); then a measured one over a derived one; among
  // equals, the first listed.
  std::shared_ptr<const CostProfile> first_match;
  int best = -1;
  const auto listed = shipped_list(files);
  for (const auto& path : *listed) {
    std::shared_ptr<const CostProfile> p = shared_cost_profile(path, files);
    if (p->gpu_model == gpu_model) {
      const bool named =
          !node_type.empty() && (p->name == node_type || p->name.rfind(node_type + "-", 0) == 0);
      const int rank = (named ? 2 : 0) + (p->status == "measured" ? 1 : 0);
      if (rank > best) {
        best = rank;
        first_match = p;
      }
    }
  }
  if (first_match) return first_match;
  std::string shipped;  // the profiles seen, for the error
  for (const auto& path : *listed) {
    std::shared_ptr<const CostProfile> p = shared_cost_profile(path, files);
    (shipped += shipped.empty() ? "" : ", ") += p->name + " (" + p->gpu_model + ")";
  }
  throw InputError(
      "<command line>", "--profile",
      fmt::format("no shipped cost profile matches GPU model '{}' (shipped: {}); pass --profile "
                  "NAME|FILE",
                  gpu_model, shipped.empty() ? "none" : shipped));
}

CostProfile select_cost_profile(const std::string& name_or_file, const Topology& topo) {
  return *shared_select_cost_profile(name_or_file, topo.gpu_model(), nullptr, topo.node_type());
}

}  // namespace zerosim
