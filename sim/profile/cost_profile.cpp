// CostProfile parsing, serialization, lookups and selection. The JSON layout (units in key names):
// {
//   "version": 1, "name": "dgx-h100", "gpu_model": "H100-SXM5-80GB",
//   "provenance": {"status": "derived"|"measured", ...free-form: sources, dates, command...},
//   "gpu": {"peak_tflops": 989.4, "memory_bytes": 85899345920, "hbm_GBps": 3350},
//   "gemm_efficiency": [{"flops": 1e8, "efficiency": 0.05}, ...],   // strictly increasing flops
//   "attention_efficiency": 0.4,
//   "kernels": {"quantize_int8": {"throughput_GBps": 2500, "launch_us": 5}, ...},
//   "optimizer_GBps": 2000, "memory_reserved_bytes": 2147483648,
//   "link_classes": {"nvlink": {"hop_latency_us": 3.4, "efficiency": 0.82}, "pcie": {...},
//   "network": {...}}, "collectives": {"all_gather/intra_node": {"ranks": 8, "segments":
//   [{"min_bytes": 0, "alpha_us": 10,
//                    "busbw_GBps": 300}, ...]}}                      // optional
// }
#include "sim/profile/cost_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/memo.hpp"

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

CollectiveCurve parse_curve(const JsonReader& r) {
  r.require_object({"ranks", "segments"});
  CollectiveCurve c;
  if (r.has("ranks")) c.ranks = r.at("ranks").get_int32_at_least(1);
  JsonReader segs = r.at("segments");
  std::size_t n = segs.array_size();
  if (n == 0) segs.fail("must have at least one segment");
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader s = segs.at(i);
    s.require_object({"min_bytes", "alpha_us", "busbw_GBps"});
    CollectiveCurve::Segment seg;
    seg.min_bytes = get_bytes(s.at("min_bytes"), 0);
    if (i == 0 && seg.min_bytes != 0)
      s.at("min_bytes").fail("the first segment must start at 0 bytes");
    if (i > 0 && seg.min_bytes <= c.segments.back().min_bytes)
      s.at("min_bytes").fail("segments must have strictly increasing min_bytes");
    seg.alpha_s = s.at("alpha_us").get_nonnegative() * 1e-6;
    seg.busbw_Bps = s.at("busbw_GBps").get_positive() * 1e9;
    c.segments.push_back(seg);
  }
  return c;
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

const std::vector<std::string>& collective_op_names() {
  static const std::vector<std::string> names = {"all_gather", "all_reduce", "all_to_all",
                                                 "reduce_scatter", "send_recv"};
  return names;
}

const std::vector<std::string>& collective_tier_names() {
  static const std::vector<std::string> names = {"inter_node", "intra_node"};
  return names;
}

const char* link_class_key(LinkClass c) {
  for (const auto& [cls, key] : kLinkClassKeys)
    if (cls == c) return key;
  return "?";
}

double CollectiveCurve::time(double bytes_factor, double bytes) const {
  if (segments.empty()) throw std::out_of_range("collective curve has no segments");
  const Segment* seg = &segments.front();
  for (const auto& s : segments)
    if (bytes >= static_cast<double>(s.min_bytes)) seg = &s;
  return seg->alpha_s + bytes_factor * bytes / seg->busbw_Bps;
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

const CollectiveCurve* CostProfile::collective(const std::string& op,
                                               const std::string& tier) const {
  auto it = collectives.find(op + "/" + tier);
  return it == collectives.end() ? nullptr : &it->second;
}

CostProfile parse_cost_profile(const json& j, const std::string& file) {
  JsonReader r(j, file);
  r.require_object({"version", "name", "gpu_model", "provenance", "gpu", "gemm_efficiency",
                    "attention_efficiency", "kernels", "optimizer_GBps", "memory_reserved_bytes",
                    "link_classes", "collectives"});
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

  JsonReader curve = r.at("gemm_efficiency");
  std::size_t n = curve.array_size();
  if (n == 0) curve.fail("must have at least one point");
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader pt = curve.at(i);
    pt.require_object({"flops", "efficiency"});
    double f = pt.at("flops").get_positive();
    if (i > 0 && f <= p.gemm_efficiency.back().first)
      pt.at("flops").fail("points must be sorted by strictly increasing flops");
    p.gemm_efficiency.emplace_back(f, get_efficiency(pt.at("efficiency")));
  }
  p.attention_efficiency = get_efficiency(r.at("attention_efficiency"));

  JsonReader kernels = r.at("kernels");
  if (!kernels.value().is_object()) kernels.fail("must be an object");
  const auto& known = cost_profile_kernel_names();
  for (const auto& [kname, _] : kernels.value().items()) {
    if (std::find(known.begin(), known.end(), kname) == known.end())
      kernels.at(kname).fail(
          fmt::format("unknown kernel '{}' (known: {})", kname, fmt::join(known, ", ")));
    p.kernels[kname] = parse_kernel(kernels.at(kname));
  }
  for (const auto& kname : known)
    if (!p.kernels.count(kname)) kernels.fail(fmt::format("missing required kernel '{}'", kname));

  p.optimizer_Bps = r.at("optimizer_GBps").get_positive() * 1e9;
  p.memory_reserved_bytes = r.at("memory_reserved_bytes").get_nonnegative();
  if (p.memory_reserved_bytes >= static_cast<double>(p.memory_bytes))
    r.at("memory_reserved_bytes").fail("must be less than gpu/memory_bytes");

  JsonReader links = r.at("link_classes");
  links.require_object({"nvlink", "pcie", "network"});
  for (const auto& [cls, key] : kLinkClassKeys) {
    JsonReader l = links.at(key);
    l.require_object({"hop_latency_us", "efficiency"});
    LinkClassCost c;
    c.hop_latency_s = l.at("hop_latency_us").get_nonnegative() * 1e-6;
    c.efficiency = get_efficiency(l.at("efficiency"));
    p.link_classes[cls] = c;
  }

  if (r.has("collectives")) {
    JsonReader colls = r.at("collectives");
    if (!colls.value().is_object()) colls.fail("must be an object");
    for (const auto& [key, _] : colls.value().items()) {
      auto slash = key.find('/');
      std::string op = key.substr(0, slash);
      std::string tier = slash == std::string::npos ? "" : key.substr(slash + 1);
      const auto& ops = collective_op_names();
      const auto& tiers = collective_tier_names();
      if (std::find(ops.begin(), ops.end(), op) == ops.end() ||
          std::find(tiers.begin(), tiers.end(), tier) == tiers.end())
        colls.at(key).fail(
            fmt::format("key must be '<op>/<tier>' with op one of {} and tier one of {}",
                        fmt::join(ops, ", "), fmt::join(tiers, ", ")));
      p.collectives[key] = parse_curve(colls.at(key));
    }
  }
  return p;
}

namespace {

// Every scenario of a sweep loads the same profile(s): parse each distinct file content once, and
// copy only the profile that is used.
std::shared_ptr<const CostProfile> shared_cost_profile(const std::string& path) {
  static FileMemo<CostProfile> memo;
  if (auto p = memo.get(path, [&](const std::string& text) {
        return parse_cost_profile(parse_json_text(text, path), path);
      }))
    return p;
  return std::make_shared<const CostProfile>(parse_cost_profile(load_json_file(path), path));
}

}  // namespace

CostProfile load_cost_profile(const std::string& path) { return *shared_cost_profile(path); }

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
  json kernels = json::object();
  for (const auto& [kname, k] : p.kernels)
    kernels[kname] = {{"throughput_GBps", clean(k.throughput_Bps / 1e9)},
                      {"launch_us", clean(k.launch_s * 1e6)}};
  j["kernels"] = kernels;
  j["optimizer_GBps"] = clean(p.optimizer_Bps / 1e9);
  j["memory_reserved_bytes"] = p.memory_reserved_bytes;
  json links = json::object();
  for (const auto& [cls, c] : p.link_classes)
    links[link_class_key(cls)] = {{"hop_latency_us", clean(c.hop_latency_s * 1e6)},
                                  {"efficiency", c.efficiency}};
  j["link_classes"] = links;
  if (!p.collectives.empty()) {
    json colls = json::object();
    for (const auto& [key, c] : p.collectives) {
      json segs = json::array();
      for (const auto& s : c.segments)
        segs.push_back({{"min_bytes", s.min_bytes},
                        {"alpha_us", clean(s.alpha_s * 1e6)},
                        {"busbw_GBps", clean(s.busbw_Bps / 1e9)}});
      json cj = {{"segments", segs}};
      if (c.ranks > 0) cj["ranks"] = c.ranks;
      colls[key] = cj;
    }
    j["collectives"] = colls;
  }
  return j;
}

std::vector<std::string> shipped_cost_profiles() {
  // Listed on every call (a profile added meanwhile is seen); json_files_in lists the directory
  // again only when it has changed.
  static const std::string dir = (fs::path(ZEROSIM_DATA_DIR) / "calibrate" / "profiles").string();
  return json_files_in(dir);
}

CostProfile select_cost_profile_for_gpu(const std::string& name_or_file,
                                        const std::string& gpu_model) {
  return *shared_select_cost_profile(name_or_file, gpu_model);
}

std::shared_ptr<const CostProfile> shared_select_cost_profile(const std::string& name_or_file,
                                                              const std::string& gpu_model) {
  if (!name_or_file.empty())
    return shared_cost_profile(resolve_data_file("calibrate/profiles", name_or_file, "--profile"));
  std::string shipped;  // the profiles seen, for the error
  for (const auto& path : shipped_cost_profiles()) {
    std::shared_ptr<const CostProfile> p = shared_cost_profile(path);
    if (p->gpu_model == gpu_model) return p;
    (shipped += shipped.empty() ? "" : ", ") += p->name + " (" + p->gpu_model + ")";
  }
  throw InputError(
      "<command line>", "--profile",
      fmt::format("no shipped cost profile matches GPU model '{}' (shipped: {}); pass --profile "
                  "NAME|FILE",
                  gpu_model, shipped.empty() ? "none" : shipped));
}

CostProfile select_cost_profile(const std::string& name_or_file, const Topology& topo) {
  return select_cost_profile_for_gpu(name_or_file, topo.gpu_model());
}

}  // namespace zerosim
