#include "calibrate/fit/measurements.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::calib {

namespace {

// nccl-tests prints bandwidths with two decimals and times with about four significant digits.
bool consistent(double given, double expected) {
  return std::fabs(given - expected) <= 0.02 * expected + 0.011;
}

void parse_collective(const JsonReader& r, const std::string& where, Measurements& out) {
  r.require_object({"kind", "op", "ranks", "nodes", "gpus_per_node", "gpus_per_thread", "tier",
                    "bytes", "time_s", "algbw_GBps", "busbw_GBps", "nccl_version"});
  CollectiveRecord c;
  c.where = where;
  c.op = r.at("op").get_string();
  CollKind kind = CollKind::AllGather;
  try {
    kind = parse_coll_kind(c.op, "op");
  } catch (const InputError& e) {
    r.at("op").fail(e.rule());
  }
  c.ranks = r.at("ranks").get_int32_at_least(kind == CollKind::SendRecv ? 2 : 1);
  c.nodes = r.has("nodes") ? r.at("nodes").get_int32_at_least(1) : 1;
  if (c.nodes > c.ranks) r.at("nodes").fail(fmt::format("must not exceed ranks ({})", c.ranks));
  c.gpus_per_node = (c.ranks + c.nodes - 1) / c.nodes;
  if (r.has("gpus_per_node")) {
    c.gpus_per_node = r.at("gpus_per_node").get_int32_at_least(1);
    if (c.gpus_per_node > c.ranks)
      r.at("gpus_per_node").fail(fmt::format("must not exceed ranks ({})", c.ranks));
    if (static_cast<long long>(c.gpus_per_node) * c.nodes < c.ranks)
      r.at("gpus_per_node")
          .fail(fmt::format("{} nodes x {} ranks per node hold fewer than the {} ranks", c.nodes,
                            c.gpus_per_node, c.ranks));
  }
  if (r.has("gpus_per_thread")) {
    c.gpus_per_thread = r.at("gpus_per_thread").get_int32_at_least(1);
    if (c.gpus_per_thread > c.gpus_per_node)
      r.at("gpus_per_thread")
          .fail(fmt::format("must not exceed the ranks per node ({}): one thread drives GPUs of "
                            "its own node",
                            c.gpus_per_node));
  }
  if (r.has("nccl_version")) {
    c.nccl_version = r.at("nccl_version").get_string();
    if (nccl_version_code(c.nccl_version) < 0)
      r.at("nccl_version").fail("must be an NCCL release MAJOR.MINOR[.PATCH], e.g. \"2.21\"");
  }
  c.tier = tier_for_nodes(c.nodes);
  if (r.has("tier") && r.at("tier").get_string() != c.tier)
    r.at("tier").fail(
        fmt::format("must be \"{}\" for a collective over {} node(s)", c.tier, c.nodes));
  c.bytes = static_cast<std::uint64_t>(r.at("bytes").get_int_at_least(1));
  c.time_s = r.at("time_s").get_positive();
  double algbw = static_cast<double>(c.bytes) / c.time_s / 1e9;
  double busbw = algbw * busbw_factor(kind, c.ranks);
  c.algbw_GBps = algbw;
  c.busbw_GBps = busbw;
  if (r.has("algbw_GBps")) {
    double given = r.at("algbw_GBps").get_nonnegative();
    if (!consistent(given, algbw))
      r.at("algbw_GBps")
          .fail(fmt::format("is {} but bytes/time_s gives {:.4g} GB/s", given, algbw));
  }
  if (r.has("busbw_GBps")) {
    double given = r.at("busbw_GBps").get_nonnegative();
    if (!consistent(given, busbw))
      r.at("busbw_GBps")
          .fail(fmt::format("is {} but algbw x nccl-tests' bus factor gives {:.4g} GB/s", given,
                            busbw));
  }
  out.collectives.push_back(c);
}

void parse_kernel(const JsonReader& r, const std::string& where, Measurements& out) {
  r.require_object({"kind", "name", "bytes", "time_s", "elements", "dtype"});
  KernelRecord k;
  k.where = where;
  k.name = r.at("name").get_string();
  const auto& known = cost_profile_kernel_names();
  if (std::find(known.begin(), known.end(), k.name) == known.end())
    r.at("name").fail(
        fmt::format("unknown kernel '{}' (known: {})", k.name, fmt::join(known, ", ")));
  k.bytes = static_cast<std::uint64_t>(r.at("bytes").get_int_at_least(1));
  k.time_s = r.at("time_s").get_positive();
  if (r.has("elements")) r.at("elements").get_int_at_least(1);  // informational
  if (r.has("dtype")) r.at("dtype").get_string();
  out.kernels.push_back(k);
}

void parse_gemm(const JsonReader& r, const std::string& where, Measurements& out) {
  r.require_object({"kind", "m", "n", "k", "time_s", "dtype", "label"});
  GemmRecord g;
  g.where = where;
  g.m = r.at("m").get_int_at_least(1);
  g.n = r.at("n").get_int_at_least(1);
  g.k = r.at("k").get_int_at_least(1);
  g.time_s = r.at("time_s").get_positive();
  if (r.has("dtype")) g.dtype = r.at("dtype").get_string();
  if (r.has("label")) r.at("label").get_string();
  out.gemms.push_back(g);
}

}  // namespace

std::string tier_for_nodes(int nodes) { return nodes > 1 ? "inter_node" : "intra_node"; }

std::string measurements_header(const json& provenance) {
  json h = {{"format", kMeasurementsFormat},
            {"version", kMeasurementsVersion},
            {"provenance", provenance}};
  return h.dump();
}

json to_json(const CollectiveRecord& r) {
  json j = {{"kind", "collective"},
            {"op", r.op},
            {"ranks", r.ranks},
            {"nodes", r.nodes},
            {"tier", r.tier},
            {"bytes", r.bytes},
            {"time_s", r.time_s},
            {"algbw_GBps", r.algbw_GBps},
            {"busbw_GBps", r.busbw_GBps}};
  if (r.gpus_per_node > 0) j["gpus_per_node"] = r.gpus_per_node;
  if (r.gpus_per_thread > 1) j["gpus_per_thread"] = r.gpus_per_thread;
  if (!r.nccl_version.empty()) j["nccl_version"] = r.nccl_version;
  return j;
}

json to_json(const KernelRecord& r) {
  return {{"kind", "kernel"}, {"name", r.name}, {"bytes", r.bytes}, {"time_s", r.time_s}};
}

json to_json(const GemmRecord& r) {
  return {{"kind", "gemm"}, {"m", r.m},           {"n", r.n},
          {"k", r.k},       {"time_s", r.time_s}, {"dtype", r.dtype}};
}

namespace {

// Non-blank lines of `text`: its header and its records.
std::size_t content_lines(std::string_view text) {
  std::size_t n = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    if (text.substr(0, end).find_first_not_of(" \t\r") != std::string_view::npos) ++n;
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return n;
}

}  // namespace

void parse_measurements_text(const std::string& text, const std::string& file, Measurements& out) {
  const std::size_t held = out.collectives.size() + out.kernels.size() + out.gemms.size();
  if (const std::size_t lines = content_lines(text);
      lines > 0 && held + lines - 1 > kMaxMeasurementRecords)
    throw InputError(
        file, "",
        fmt::format("{} records{}, more than the limit of {} (the fit's time grows "
                    "with them): fit on a subset",
                    lines - 1, held > 0 ? fmt::format(" after {} read before", held) : "",
                    kMaxMeasurementRecords));
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = fmt::format("{}:{}", file, lineno);
    json j = parse_json_text(line, where);
    JsonReader r(j, where);
    if (!header) {
      if (!r.has("format"))
        r.fail(
            fmt::format("the first line must be the header {{\"format\": \"{}\", \"version\": {}, "
                        "\"provenance\": {{...}}}}",
                        kMeasurementsFormat, kMeasurementsVersion));
      r.require_object({"format", "version", "provenance"});
      if (r.at("format").get_string() != kMeasurementsFormat)
        r.at("format").fail(
            fmt::format("must be \"{}\" (the first line of a measurement file is its header)",
                        kMeasurementsFormat));
      if (r.at("version").get_int() != kMeasurementsVersion)
        r.at("version").fail(
            fmt::format("unsupported version (this build reads {})", kMeasurementsVersion));
      if (!r.at("provenance").value().is_object()) r.at("provenance").fail("must be an object");
      out.files.push_back(file);
      out.provenance.push_back(r.at("provenance").value());
      header = true;
      continue;
    }
    std::string kind = r.at("kind").get_string();
    if (kind == "collective")
      parse_collective(r, where, out);
    else if (kind == "kernel")
      parse_kernel(r, where, out);
    else if (kind == "gemm")
      parse_gemm(r, where, out);
    else
      r.at("kind").fail(fmt::format("unknown record kind '{}' (collective, kernel, gemm)", kind));
  }
  if (!header) throw InputError(file, "", "empty measurement file: no header line");
}

void load_measurements(const std::string& path, Measurements& out) {
  parse_measurements_text(read_input_file(path), path, out);
}

MeasurementWriter::MeasurementWriter(const std::string& path, const json& provenance)
    : path_(path) {
  // Appending to a FIFO would block for a reader; to a device, write into it.
  if (const std::string rule = non_regular_output_rule(path); !rule.empty())
    throw InputError(path, "--out", rule);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(path, "--out",
                     fmt::format("cannot open for appending: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0)
    append(json::parse(measurements_header(provenance)));
}

MeasurementWriter::~MeasurementWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void MeasurementWriter::append(const json& record) {
  std::string line = record.dump() + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError(path_, fmt::format("appending a record failed: {}", std::strerror(errno)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0)
    throw InputError(path_, "--out", fmt::format("fsync failed: {}", std::strerror(errno)));
}

}  // namespace zerosim::calib
